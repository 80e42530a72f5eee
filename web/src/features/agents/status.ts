import type { Agent } from "../../api/types";
import { CAPABILITIES, type HostCapability } from "../hosts/capabilities";

export type AgentState = "disabled" | "incompatible" | "unreachable" | "online" | "unknown";

export interface AgentStatus {
  state: AgentState;
  label: string;
  /** Why, when it is not online (the last contact's error). */
  detail: string | null;
}

/**
 * What the record says of the agent's last contact (a test, the fleet dashboard, a proxied
 * request): disabled, running a version this central cannot talk to (that is not an error
 * of the agent: it is said as such), unreachable with the error, online, or never reached.
 */
export function agentStatus(agent: Agent): AgentStatus {
  if (!agent.enabled) return { state: "disabled", label: "Disabled", detail: null };
  if (agent.version !== null && !agent.compatible) {
    return { state: "incompatible", label: "Incompatible version", detail: null };
  }
  if (agent.last_error) return { state: "unreachable", label: "Unreachable", detail: agent.last_error };
  if (agent.last_seen_at) return { state: "online", label: "Online", detail: null };
  return { state: "unknown", label: "Not reached yet", detail: null };
}

/** The capabilities this UI knows that `offered` lacks (an older agent's). */
export function missingCapabilities(offered: readonly string[]): HostCapability[] {
  return CAPABILITIES.filter((capability) => !offered.includes(capability));
}

/** Whether `url` is an HTTPS address (its certificate is then pinned, or a CA trusted). */
export function isHttps(url: string): boolean {
  return url.trim().toLowerCase().startsWith("https://");
}
