import type { Agent } from "../../api/types";

/**
 * Whether an enabled agent that dials in is about to change: its host may enrol, its new
 * key may take over, its tunnel may come (back) up. Such an agent's page asks again
 * sooner; within `window` ms of its last change only, as one never seen again would make
 * the page ask every few seconds for as long as it is open.
 */
export function isSettling(agent: Agent, now: number, window: number): boolean {
  if (agent.kind !== "tunnel" || !agent.enabled) return false;
  if (agent.rotating) return true;
  if (agent.tunnel === "connected") return false;
  const changes = [agent.created_at, agent.updated_at, agent.tunnel_since].map((at) => (at ? Date.parse(at) : NaN));
  const last = Math.max(...changes.filter((at) => !Number.isNaN(at)));
  return now - last < window;
}
