import type { Stack, StackState } from "../../api/types";
import type { Tone } from "../../components/tone";

/**
 * A stack's one state word (the server's, which includes health) as the stacks list, the
 * stack's page, the side list and the dashboard say it. In the server's order of
 * precedence: restarting, unhealthy, invalid, partly running, rolled back, running, stopped.
 */
export const STATE_LABEL: Record<StackState, string> = {
  restarting: "Restarting",
  unhealthy: "Unhealthy",
  invalid: "Invalid",
  partial: "Partly running",
  rolled_back: "Rolled back",
  running: "Running",
  stopped: "Stopped",
};

/** What each state means, for a tooltip. */
export const STATE_MEANING: Record<StackState, string> = {
  restarting: "A container is restarting over and over",
  unhealthy: "A container fails its healthcheck",
  invalid: "The compose file cannot be read",
  partial: "Some of the services run, not all",
  rolled_back: "Every service runs, but the last update failed its health check and was rolled back",
  running: "Every service runs",
  stopped: "Nothing runs",
};

/** The colour of each state, here and in the dashboard's breakdown. */
export const STATE_TONES: Record<StackState, Tone> = {
  restarting: "bad",
  unhealthy: "bad",
  invalid: "bad",
  partial: "warn",
  rolled_back: "warn",
  running: "good",
  stopped: "off",
};

/** The states in the order of the breakdown and of sorting by state: running first. */
export const STATE_ORDER: readonly StackState[] = [
  "running",
  "rolled_back",
  "partial",
  "unhealthy",
  "restarting",
  "stopped",
  "invalid",
];

/**
 * The colour of a container's health: "starting" is no alarm (a container is starting
 * while its healthcheck has not passed yet), only "unhealthy" is.
 */
export function healthTone(health: string): Tone {
  return health === "healthy" ? "good" : health === "unhealthy" ? "bad" : "info";
}

/** "2 of 2 running", with how many of them are unhealthy or restarting when any are. */
export function servicesSummary(stack: Pick<Stack, "services">): string {
  const total = stack.services.length;
  if (total === 0) return "No services";
  const running = stack.services.filter((s) => s.running).length;
  const containers = stack.services.flatMap((s) => s.containers);
  const unhealthy = containers.filter((c) => c.state === "running" && c.health === "unhealthy").length;
  const restarting = containers.filter((c) => c.state === "restarting").length;
  const troubles = [
    unhealthy > 0 ? `${unhealthy} unhealthy` : "",
    restarting > 0 ? `${restarting} restarting` : "",
  ].filter(Boolean);
  return [`${running} of ${total} running`, ...troubles].join(", ");
}
