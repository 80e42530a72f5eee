import type { Agent } from "../../api/types";
import type { Tone } from "../../components/tone";
import { CAPABILITIES, type HostCapability } from "../hosts/capabilities";

export interface AgentStatus {
  label: string;
  tone: Tone;
  /** Why, when it is not online (the last contact's error). */
  detail: string | null;
  /** Since when it is so (an agent that dials in: connected since, down since). */
  since?: string | null;
  /** What the label alone does not say (muted, after it). */
  note?: string | null;
}

/**
 * What the record says of the agent's last contact (a test, the fleet dashboard, a proxied
 * request): disabled, running a version this central cannot talk to (that is not an error
 * of the agent: it is said as such), unreachable with the error, online, or never reached.
 * An agent that dials in says its tunnel instead (`tunnelStatus`).
 */
export function agentStatus(agent: Agent): AgentStatus {
  if (!agent.enabled) return { label: "Disabled", tone: "off", detail: null };
  if (agent.kind === "tunnel") return tunnelStatus(agent);
  if (agent.version !== null && !agent.compatible) {
    return { label: "Incompatible version", tone: "warn", detail: null };
  }
  if (agent.last_error) return { label: "Unreachable", tone: "bad", detail: agent.last_error };
  if (agent.last_seen_at) return { label: "Online", tone: "good", detail: null };
  return { label: "Not reached yet", tone: "off", detail: null };
}

/**
 * An enabled agent that dials in: waiting for its host to enrol (the token's expiry is not
 * on the record: it may have passed), its tunnel connected (since when), reconnecting (down
 * since when: it dials again on its own, so it is not an error), or not connected since
 * this central started. An error is said only through a live tunnel: otherwise the
 * tunnel's state is the reason.
 */
function tunnelStatus(agent: Agent): AgentStatus {
  if (!agent.enrolled) {
    return { label: "Not enrolled yet", tone: "off", detail: null, note: "Waiting for its host to enrol" };
  }
  if (agent.tunnel === "connected") {
    if (agent.version !== null && !agent.compatible) {
      return { label: "Incompatible version", tone: "warn", detail: null, note: "Connected", since: agent.tunnel_since };
    }
    return { label: "Connected", tone: "good", detail: agent.last_error, since: agent.tunnel_since };
  }
  if (agent.tunnel === "reconnecting") {
    return { label: "Reconnecting", tone: "info", detail: null, since: agent.tunnel_since };
  }
  return { label: "Never connected", tone: "bad", detail: null, note: "since this Stackyard started" };
}

/** The capabilities this UI knows that `offered` lacks (an older agent's). */
export function missingCapabilities(offered: readonly string[]): HostCapability[] {
  return CAPABILITIES.filter((capability) => !offered.includes(capability));
}

/** Whether `url` is an HTTPS address (its certificate is then pinned, or a CA trusted). */
export function isHttps(url: string): boolean {
  return url.trim().toLowerCase().startsWith("https://");
}
