import type { Agent, AgentProbe, NewTunnelAgent } from "../api/types";
import type { HostCapability } from "../features/hosts/capabilities";

export const FINGERPRINT =
  "3A:9F:10:22:C4:5B:6E:7D:88:91:AA:BB:CC:DD:EE:FF:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:01";

export const ALL_CAPABILITIES: HostCapability[] = ["stacks", "updates", "logs", "shell", "usage", "files", "backups", "fleet", "containers"];

export function makeAgent(overrides: Partial<Agent> = {}): Agent {
  return {
    id: 3,
    name: "nas",
    url: "https://nas.lan:8443",
    enabled: true,
    fingerprint: FINGERPRINT,
    trusts_ca: false,
    version: "0.1.0",
    capabilities: ALL_CAPABILITIES,
    compatible: true,
    incompatibility: null,
    last_seen_at: "2025-03-01T10:00:00Z",
    last_error: null,
    created_at: "2025-02-01T10:00:00Z",
    updated_at: null,
    kind: "direct",
    tunnel: null,
    tunnel_since: null,
    enrolled: true,
    key_fingerprint: null,
    rotating: false,
    ...overrides,
  };
}

export const KEY_FINGERPRINT = "SHA256:q5Fb0mYx8pT2dXo3kZ1rW9cVn4LhE7sJ6aGuB0iNQeM";

/** An agent that dials the central, enrolled, its tunnel up since 09:55. */
export function makeTunnelAgent(overrides: Partial<Agent> = {}): Agent {
  return makeAgent({
    id: 7,
    name: "home-nas",
    url: "tunnel",
    kind: "tunnel",
    fingerprint: null,
    tunnel: "connected",
    tunnel_since: "2025-03-01T09:55:00Z",
    key_fingerprint: KEY_FINGERPRINT,
    ...overrides,
  });
}

export const ENROL_TOKEN = "Xy3_enrol-once-7Qp";

/** A tunnel agent just made, waiting for its host to enrol with its token. */
export function makeNewTunnelAgent(overrides: Partial<NewTunnelAgent> = {}): NewTunnelAgent {
  const central = "https://stackyard.example.com";
  return {
    agent: makeTunnelAgent({
      id: 8,
      name: "laptop",
      enrolled: false,
      tunnel: "never",
      tunnel_since: null,
      key_fingerprint: null,
      version: null,
      capabilities: [],
      last_seen_at: null,
    }),
    token: ENROL_TOKEN,
    expires_at: "2025-03-01T10:15:00Z",
    command: `stackyard agent --connect ${central} --enrol ${ENROL_TOKEN}`,
    compose:
      "services:\n  agent:\n    image: stackyard/stackyard:latest\n" +
      `    command: [stackyard, agent, --connect, ${central}, --enrol, ${ENROL_TOKEN}]\n` +
      "    volumes:\n      - /var/run/docker.sock:/var/run/docker.sock\n      - agent-data:/data\n" +
      "    restart: unless-stopped\nvolumes:\n  agent-data:\n",
    ...overrides,
  };
}

export function makeProbe(overrides: Partial<AgentProbe> = {}): AgentProbe {
  return {
    ok: true,
    detail: "Agent 0.1.0 answered",
    version: "0.1.0",
    capabilities: ALL_CAPABILITIES,
    compatible: true,
    incompatibility: null,
    fingerprint: FINGERPRINT,
    ...overrides,
  };
}
