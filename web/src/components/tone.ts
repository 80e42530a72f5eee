/**
 * A status colour: good, a warning, bad, switched off, or merely of note. `tone-${tone}`
 * (styles.css) gives an element the colour and its pale background; its own class says
 * where they go (text with `status`, a badge, a bar, a border).
 */
export type Tone = "good" | "warn" | "bad" | "off" | "info";
