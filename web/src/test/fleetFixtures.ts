import type { Attention, Fleet, HostCard, HostReport } from "../api/types";

const GB = 1_000_000_000;

export function makeReport(overrides: Partial<HostReport> = {}): HostReport {
  return {
    name: "central",
    version: "0.1.0",
    stacks: { running: 2, partial: 1, stopped: 1, invalid: 0 },
    partial: ["db"],
    troubles: [],
    updates: ["web"],
    failed_backups: [],
    resources: {
      cpus: 4,
      load: [0.52, 0.4, 0.31],
      memory_total: 8 * GB,
      memory_available: 6 * GB,
      disk_path: "/var/lib/docker",
      disk_total: 100 * GB,
      disk_free: 40 * GB,
      containers_running: 5,
      containers_total: 7,
      stacks: 4,
    },
    engine_error: null,
    ...overrides,
  };
}

export function makeHost(overrides: Partial<HostCard> = {}): HostCard {
  return {
    id: null,
    name: "central",
    kind: "local",
    status: "online",
    detail: null,
    version: "0.1.0",
    last_seen_at: "2025-03-01T10:00:00Z",
    answered_in_ms: 12.4,
    report: makeReport(),
    ...overrides,
  };
}

export function makeAttention(overrides: Partial<Attention> = {}): Attention {
  return {
    severity: "warning",
    kind: "stack_partial",
    host: "central",
    host_id: null,
    stack: "db",
    message: "Only some services run",
    subject: "db",
    state: null,
    ...overrides,
  };
}

export function makeFleet(overrides: Partial<Fleet> = {}): Fleet {
  return {
    generated_at: "2025-03-01T10:00:05Z",
    attention: [],
    kpis: {
      hosts: 1,
      hosts_online: 1,
      stacks: 4,
      stacks_running: 2,
      containers_running: 5,
      containers_total: 7,
      updates: 1,
      critical: 0,
      warnings: 1,
    },
    breakdown: { running: 2, partial: 1, stopped: 1, invalid: 0 },
    hosts: [makeHost()],
    ...overrides,
  };
}
