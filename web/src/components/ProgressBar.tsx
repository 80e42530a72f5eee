import type { Tone } from "./tone";

/** "42%" */
export function percentText(percent: number): string {
  return `${Math.round(percent)}%`;
}

/** One bar: determinate with aria-valuenow, or indeterminate (an animated stripe, no value). */
export function ProgressBar({
  label,
  percent,
  tone,
  labelledBy,
  valueText,
}: {
  label?: string;
  percent: number | null;
  /** Without one, the accent colour. */
  tone?: Tone;
  labelledBy?: string;
  /** What a screen reader says instead of the percentage (e.g. "1.2 MB of 4.0 MB"). */
  valueText?: string;
}) {
  const value = percent === null ? null : Math.min(100, Math.max(0, percent));
  return (
    <div
      className={`progress${tone ? ` tone-${tone}` : ""}${value === null ? " progress-indeterminate" : ""}`}
      role="progressbar"
      aria-label={labelledBy ? undefined : label}
      aria-labelledby={labelledBy}
      aria-valuemin={0}
      aria-valuemax={100}
      aria-valuenow={value === null ? undefined : Math.round(value)}
      aria-valuetext={valueText ?? (value === null ? "In progress" : percentText(value))}
    >
      <div className="progress-fill" style={value === null ? undefined : { width: `${value}%` }} />
    </div>
  );
}
