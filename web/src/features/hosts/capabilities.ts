import { useQuery } from "@tanstack/react-query";
import type { HostId } from "../../api/hosts";
import type { Agent } from "../../api/types";
import { agentsQueryOptions } from "../agents/queries";

/** What an agent may serve under /agent (it lists those it does at /agent/health): the server's names. */
export type HostCapability = Agent["capabilities"][number];

export const CAPABILITY_LABELS: Record<HostCapability, string> = {
  stacks: "stacks",
  updates: "image update checks",
  logs: "logs",
  shell: "container shells",
  usage: "resource use",
  files: "the file browser",
  backups: "backups",
  fleet: "the fleet report",
  containers: "the containers outside stacks",
  events: "notifications of its events",
  disk: "its disk, images, volumes and networks",
};

/** Every capability this UI knows, in the order it lists them. */
export const CAPABILITIES = Object.keys(CAPABILITY_LABELS) as HostCapability[];

/**
 * Why `capability` cannot be used on `agent` (a sentence for the user), or null when it
 * can or when that is not known yet (an agent never reached has no capabilities on record:
 * its requests then answer for themselves).
 */
export function unavailableOn(agent: Agent, capability: HostCapability): string | null {
  if (!agent.enabled) return `${agent.name} is disabled: enable it on the Agents page to use it.`;
  if (agent.version === null) return null;
  if (!agent.compatible) {
    return `${agent.name} cannot be used from here: ${agent.incompatibility ?? `its version ${agent.version} is not supported`}.`;
  }
  if (!agent.capabilities.includes(capability)) {
    return `Not available on ${agent.name}: its agent (version ${agent.version}) does not offer ${CAPABILITY_LABELS[capability]}.`;
  }
  return null;
}

export interface HostInfo {
  host: HostId;
  /** "this host", or the agent's name (its id while the list loads). */
  name: string;
  /** The agent's record; null for this host and while it is not known. */
  agent: Agent | null;
  /** Known enough to ask the host: this host always; an agent once the agent list was read (or failed). */
  ready: boolean;
  /** The agent list was read and has no agent `host` (deleted, or a stale link). */
  missing: boolean;
  /** Why `capability` cannot be used on this host, or null. */
  unavailable: (capability: HostCapability) => string | null;
}

/** What the UI knows of `host`: its name and what it offers (from `GET /api/agents`). */
export function useHostInfo(host: HostId): HostInfo {
  const agents = useQuery({ ...agentsQueryOptions(), enabled: host !== null });
  if (host === null) {
    return { host, name: "this host", agent: null, ready: true, missing: false, unavailable: () => null };
  }
  const agent = agents.data?.find((a) => a.id === host) ?? null;
  const missing = agents.isSuccess && agent === null;
  return {
    host,
    name: agent?.name ?? `agent ${host}`,
    agent,
    // An agent is asked nothing before it is known to offer what is asked.
    ready: !agents.isPending,
    missing,
    unavailable: (capability) => {
      if (missing) return `There is no agent ${host} (it may have been deleted).`;
      return agent ? unavailableOn(agent, capability) : null;
    },
  };
}
