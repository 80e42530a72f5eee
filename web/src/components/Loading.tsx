/** Shown while data loads; screen readers announce it politely. */
export function Loading() {
  return (
    <p className="muted" role="status">
      Loading…
    </p>
  );
}
