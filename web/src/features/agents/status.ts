import type { Agent } from "../../api/types";
import type { Tone } from "../../components/tone";
import { CAPABILITIES, type HostCapability } from "../hosts/capabilities";

export interface AgentStatus {
  label: string;
  tone: Tone;
  /** Why, when it is not online (the last contact's error). */
  detail: string | null;
}

/**
 * What the record says of the agent's last contact (a test, the fleet dashboard, a proxied
 * request): disabled, running a version this central cannot talk to (that is not an error
 * of the agent: it is said as such), unreachable with the error, online, or never reached.
 */
export function agentStatus(agent: Agent): AgentStatus {
  if (!agent.enabled) return { label: "Disabled", tone: "off", detail: null };
  if (agent.version !== null && !agent.compatible) {
    return { label: "Incompatible version", tone: "warn", detail: null };
  }
  if (agent.last_error) return { label: "Unreachable", tone: "bad", detail: agent.last_error };
  if (agent.last_seen_at) return { label: "Online", tone: "good", detail: null };
  return { label: "Not reached yet", tone: "off", detail: null };
}

/** The capabilities this UI knows that `offered` lacks (an older agent's). */
export function missingCapabilities(offered: readonly string[]): HostCapability[] {
  return CAPABILITIES.filter((capability) => !offered.includes(capability));
}

/** Whether `url` is an HTTPS address (its certificate is then pinned, or a CA trusted). */
export function isHttps(url: string): boolean {
  return url.trim().toLowerCase().startsWith("https://");
}
