/*
 * Every date and time the UI shows is written here, one way, 24-hour, in the browser's
 * time zone unless a zone is named: "2026-03-01 14:03:22" for a moment, "14:03:22" for a
 * time of day (a run's start, a log line's with ".123"), "14:03" on a chart's axis, and
 * "Mon 2026-03-02 03:00" for a schedule's next runs in its zone. The server writes its
 * own texts the same way ("2026-03-01 14:03 UTC").
 */

interface DateParts {
  year: string;
  month: string;
  day: string;
  hour: string;
  minute: string;
  second: string;
  weekday: string;
}

const pad = (n: number, width = 2) => String(n).padStart(width, "0");
const WEEKDAYS = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"] as const;
const zoned = new Map<string, Intl.DateTimeFormat>();

/** A date's parts in the browser's zone, or in `zone` (an IANA name; unknown: an error). */
function partsOf(date: Date, zone?: string): DateParts {
  if (!zone) {
    return {
      year: String(date.getFullYear()),
      month: pad(date.getMonth() + 1),
      day: pad(date.getDate()),
      hour: pad(date.getHours()),
      minute: pad(date.getMinutes()),
      second: pad(date.getSeconds()),
      weekday: WEEKDAYS[date.getDay()] ?? "",
    };
  }
  let format = zoned.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone: zone,
      hourCycle: "h23",
      weekday: "short",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    zoned.set(zone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(date).map((part) => [part.type, part.value]));
  return {
    year: parts.year ?? "",
    month: parts.month ?? "",
    day: parts.day ?? "",
    hour: parts.hour ?? "",
    minute: parts.minute ?? "",
    second: parts.second ?? "",
    weekday: parts.weekday ?? "",
  };
}

/** An ISO timestamp (or epoch milliseconds) as a Date; null when it does not parse. */
function toDate(value: string | number): Date | null {
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? null : date;
}

/**
 * "2026-03-01 14:03:22" (`seconds: false`: "2026-03-01 14:03"; `weekday`: "Sun 2026-03-01
 * 14:03:22"), in the browser's zone or in `zone`; "—" for nothing, the raw text when it does
 * not parse.
 */
export function formatDateTime(
  value: string | number | null | undefined,
  { seconds = true, weekday = false, zone }: { seconds?: boolean; weekday?: boolean; zone?: string } = {},
): string {
  if (value === null || value === undefined || value === "") return "—";
  const date = toDate(value);
  if (!date) return String(value);
  const p = partsOf(date, zone);
  const time = seconds ? `${p.hour}:${p.minute}:${p.second}` : `${p.hour}:${p.minute}`;
  return `${weekday ? `${p.weekday} ` : ""}${p.year}-${p.month}-${p.day} ${time}`;
}

/**
 * A time of day: "14:03:22" (`seconds: false`: "14:03"; `millis`: "14:03:22.123"), in the
 * browser's zone; "—" for nothing, the raw text when it does not parse.
 */
export function formatTime(
  value: string | number | null | undefined,
  { seconds = true, millis = false }: { seconds?: boolean; millis?: boolean } = {},
): string {
  if (value === null || value === undefined || value === "") return "—";
  const date = toDate(value);
  if (!date) return String(value);
  const p = partsOf(date);
  if (!seconds) return `${p.hour}:${p.minute}`;
  return `${p.hour}:${p.minute}:${p.second}${millis ? `.${pad(date.getMilliseconds(), 3)}` : ""}`;
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
