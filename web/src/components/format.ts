/** A readable local date-time for an ISO timestamp; the raw text when it does not parse. */
export function formatDateTime(value: string | null | undefined): string {
  if (!value) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" });
}

const BYTE_UNITS = ["kB", "MB", "GB", "TB"] as const;

/** Decimal units as Docker prints them: "512 B", "1.5 kB", "12.3 MB". */
export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes) || bytes < 1000) return `${Math.max(0, Math.round(bytes || 0))} B`;
  let value = bytes;
  let unit: string = "B";
  for (const next of BYTE_UNITS) {
    if (value < 1000) break;
    value /= 1000;
    unit = next;
  }
  return `${value.toFixed(1)} ${unit}`;
}

/** "sha256:0123456789abcdef…" -> "0123456789ab" (what `docker images` shows). */
export function shortDigest(digest: string | null | undefined): string {
  if (!digest) return "—";
  const hex = digest.includes(":") ? digest.slice(digest.indexOf(":") + 1) : digest;
  return hex.slice(0, 12);
}

/** A local time of day for an ISO timestamp ("14:03:22"); the raw text when it does not parse. */
export function formatTime(value: string | null | undefined): string {
  if (!value) return "—";
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) return value;
  return date.toLocaleTimeString(undefined, { timeStyle: "medium" });
}

/**
 * How long ago an ISO timestamp was, in words: "just now", "5 min ago", "3 h ago",
 * "2 days ago"; the raw text when it does not parse.
 */
export function formatAgo(value: string | null | undefined, now: number = Date.now()): string {
  if (!value) return "never";
  const at = new Date(value).getTime();
  if (Number.isNaN(at)) return value;
  const seconds = Math.max(0, Math.round((now - at) / 1000));
  if (seconds < 45) return "just now";
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min ago`;
  const hours = Math.round(minutes / 60);
  if (hours < 48) return `${hours} h ago`;
  return `${Math.round(hours / 24)} days ago`;
}
