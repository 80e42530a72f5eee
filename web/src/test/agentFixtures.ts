import type { Agent, AgentProbe } from "../api/types";
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
