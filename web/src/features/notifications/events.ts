import type { EventKind, EventName, NotificationCatalogue, NotificationSeverity } from "../../api/types";

export const SEVERITIES: readonly NotificationSeverity[] = ["info", "warning", "critical"];

export const SEVERITY_LABELS: Record<NotificationSeverity, string> = {
  info: "Info",
  warning: "Warning",
  critical: "Critical",
};

/** A rule's minimum severity, as a choice and in its table. */
export const MIN_SEVERITY_LABELS: Record<NotificationSeverity, string> = {
  info: "Any (info and up)",
  warning: "Warnings and critical",
  critical: "Critical only",
};

/** Whether `severity` is below `minimum`. */
export function below(severity: NotificationSeverity, minimum: NotificationSeverity): boolean {
  return SEVERITIES.indexOf(severity) < SEVERITIES.indexOf(minimum);
}

/** The groups a rule's events are picked in, by what they are about (the catalogue's order within). */
const GROUPS: readonly { label: string; match: RegExp }[] = [
  { label: "Images and updates", match: /^(stack_update|update_)/ },
  { label: "Backups, schedules and restores", match: /^(backup_|schedule_|run_|retention_|restore_)/ },
  { label: "Containers and stacks", match: /^(container_|stack_)/ },
  { label: "Hosts and agents", match: /^(agent_|engine_|disk_|memory_)/ },
  { label: "Stackyard itself", match: /^(release_|self_update_|signin_)/ },
];

export interface EventGroup {
  label: string;
  events: EventKind[];
}

/** The catalogue's events in groups; one no group knows (a newer server's) goes under "Other". */
export function groupEvents(events: readonly EventKind[]): EventGroup[] {
  const groups: EventGroup[] = [...GROUPS.map((g) => ({ label: g.label, events: [] as EventKind[] })), { label: "Other", events: [] }];
  for (const event of events) {
    const at = GROUPS.findIndex((g) => g.match.test(event.name));
    groups[at === -1 ? GROUPS.length : at]?.events.push(event);
  }
  return groups.filter((g) => g.events.length > 0);
}

/** What an event is called ("Backup failed"); its name while the catalogue is not read. */
export function eventTitle(catalogue: NotificationCatalogue | undefined, name: string): string {
  return catalogue?.events.find((e) => e.name === name)?.title ?? name;
}

/** The events of `names` that a rule with `minimum` never sends (their severity is lower). */
export function eventsBelow(
  catalogue: NotificationCatalogue | undefined,
  names: readonly EventName[],
  minimum: NotificationSeverity,
): EventKind[] {
  return (catalogue?.events ?? []).filter((e) => names.includes(e.name) && below(e.severity, minimum));
}
