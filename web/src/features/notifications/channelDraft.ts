import type { Channel, ChannelKindSpec } from "../../api/types";

/** A form's values by field name, secrets too, as typed. */
export type Values = Record<string, string>;

/** The values a form starts with: a saved channel's settings (its secrets empty), or each field's default. */
export function initialValues(spec: ChannelKindSpec, channel: Channel | null): Values {
  const values: Values = {};
  for (const field of spec.fields) {
    if (field.secret) values[field.name] = "";
    else if (channel) values[field.name] = channel.settings[field.name] ?? "";
    else values[field.name] = field.default ?? "";
  }
  return values;
}

/** Every setting of the form (the server leaves the empty ones out). */
export function settingsOf(spec: ChannelKindSpec, values: Values): Record<string, string> {
  const settings: Record<string, string> = {};
  for (const field of spec.fields) {
    if (!field.secret) settings[field.name] = (values[field.name] ?? "").trim();
  }
  return settings;
}

/** The secrets typed, and with `removed` an empty one for each stored secret to remove. */
export function secretsOf(
  spec: ChannelKindSpec,
  values: Values,
  removed: ReadonlySet<string> = new Set(),
): Record<string, string> {
  const secrets: Record<string, string> = {};
  for (const field of spec.fields) {
    if (!field.secret) continue;
    if (removed.has(field.name)) secrets[field.name] = "";
    else if (values[field.name]) secrets[field.name] = values[field.name] ?? "";
  }
  return secrets;
}

/** Whether the form says what `channel` has saved: no setting changed, no secret typed or removed. */
export function unchanged(spec: ChannelKindSpec, values: Values, removed: ReadonlySet<string>, channel: Channel): boolean {
  const settings = settingsOf(spec, values);
  const same = Object.entries(settings).every(([name, value]) => value === (channel.settings[name] ?? ""));
  return same && Object.keys(secretsOf(spec, values, removed)).length === 0;
}
