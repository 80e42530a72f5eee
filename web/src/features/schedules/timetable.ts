import { formatDateTime } from "../../components/format";

export type Preset = "hourly" | "daily" | "weekly" | "monthly";

/**
 * The presets the server knows, with the expressions it resolves them to (it stores the
 * expression: an edited schedule's preset is found again by it).
 */
export const PRESETS: Record<Preset, { cron: string; label: string }> = {
  hourly: { cron: "0 * * * *", label: "Hourly, on the hour" },
  daily: { cron: "0 3 * * *", label: "Daily at 03:00" },
  weekly: { cron: "0 3 * * 0", label: "Weekly, Sundays at 03:00" },
  monthly: { cron: "0 3 1 * *", label: "Monthly, on the 1st at 03:00" },
};

/** The preset a (resolved) expression is, or null for any other. */
export function presetOf(cron: string): Preset | null {
  const normal = cron.trim().split(/\s+/).join(" ");
  const found = (Object.keys(PRESETS) as Preset[]).find((p) => p === normal || PRESETS[p].cron === normal);
  return found ?? null;
}

/** "Daily at 03:00 (Europe/Berlin)", or the expression itself. */
export function describeTimetable(cron: string, timezone: string): string {
  const preset = presetOf(cron);
  return `${preset ? PRESETS[preset].label : cron} (${timezone})`;
}

/** The browser's time zone (the form's default), UTC when it does not say. */
export function browserTimeZone(): string {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";
  } catch {
    return "UTC";
  }
}

/** Every zone the browser knows (for suggestions), or none when it cannot list them. */
export function knownTimeZones(): string[] {
  const intl = Intl as { supportedValuesOf?: (key: string) => string[] };
  try {
    return intl.supportedValuesOf?.("timeZone") ?? [];
  } catch {
    return [];
  }
}

/** A time as it reads in `timezone` ("Mon 2026-11-24 03:00"); the browser's zone when that one is unknown. */
export function formatInZone(value: string, timezone: string): string {
  try {
    return formatDateTime(value, { seconds: false, weekday: true, zone: timezone });
  } catch {
    return formatDateTime(value, { seconds: false, weekday: true });
  }
}

