import type { UpdatePolicy } from "../../api/types";

/** What each mode does, as the policy form and its read-only view say it. */
export const MODE_LABEL: Record<UpdatePolicy["mode"], string> = {
  off: "Off: not looked for",
  notify: "Notify: shown and told",
  auto: "Auto: applied, health-gated",
};

/** What counts as an update under each track. */
export const TRACK_LABEL: Record<UpdatePolicy["track"], string> = {
  digest: "A newer image of the same tag",
  patch: "Newer patch versions (1.2.x)",
  minor: "Newer minor versions (1.x)",
  major: "Any newer version",
};

/** The server's bounds (`stackyard.stacks.policy.UpdatePolicy`); it refuses anything else. */
export const POLICY_BOUNDS = {
  health_timeout: { min: 5, max: 3600 },
  settle: { min: 0, max: 600 },
  cooldown_hours: { min: 0, max: 2160 },
  window_minutes: { min: 5, max: 1440 },
} as const;

/** A policy as its form holds it: numbers as typed, no window as "". */
export interface PolicyDraft {
  mode: UpdatePolicy["mode"];
  track: UpdatePolicy["track"];
  prereleases: boolean;
  health_timeout: string;
  settle: string;
  cooldown_hours: string;
  window: string;
  window_minutes: string;
  timezone: string;
}

export function toDraft(policy: UpdatePolicy): PolicyDraft {
  return {
    mode: policy.mode,
    track: policy.track,
    prereleases: policy.prereleases,
    health_timeout: String(policy.health_timeout),
    settle: String(policy.settle),
    cooldown_hours: String(policy.cooldown_hours),
    window: policy.window ?? "",
    window_minutes: String(policy.window_minutes),
    timezone: policy.timezone,
  };
}

/** The body to send; the server checks it (bounds, settle shorter than the timeout, the cron, the zone). */
export function fromDraft(draft: PolicyDraft): UpdatePolicy {
  return {
    mode: draft.mode,
    track: draft.track,
    prereleases: draft.prereleases,
    health_timeout: Number(draft.health_timeout),
    settle: Number(draft.settle),
    cooldown_hours: Number(draft.cooldown_hours),
    window: draft.window.trim() || null,
    window_minutes: Number(draft.window_minutes),
    timezone: draft.timezone.trim(),
  };
}

export function sameDraft(a: PolicyDraft, b: PolicyDraft): boolean {
  return (Object.keys(a) as (keyof PolicyDraft)[]).every((key) => a[key] === b[key]);
}

/** "90 s", "2 min", "1 h 30 min". */
export function formatSeconds(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `${minutes} min`;
  const hours = Math.floor(minutes / 60);
  const rest = minutes % 60;
  return rest ? `${hours} h ${rest} min` : `${hours} h`;
}
