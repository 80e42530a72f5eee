import type {
  ImageUpdate,
  RegistryQuota,
  Run,
  RunProgress,
  Stack,
  StackDetail,
  StackUpdate,
  UpdatePolicy,
  UpdateSummary,
} from "../api/types";

export function makeStack(overrides: Partial<Stack> = {}): Stack {
  return {
    id: "web",
    state: "running",
    error: null,
    busy: null,
    auto_update: false,
    services: [
      {
        name: "app",
        image: "nginx:1.27",
        running: true,
        containers: [
          {
            name: "web-app-1",
            state: "running",
            status: "Up 2 hours",
            health: "healthy",
            image: "nginx:1.27",
            ports: ["0.0.0.0:8080->80/tcp"],
          },
        ],
      },
    ],
    ...overrides,
  };
}

export function makeDetail(overrides: Partial<StackDetail> = {}): StackDetail {
  return {
    ...makeStack(),
    compose_file: "compose.yaml",
    compose: "services:\n  app:\n    image: nginx:1.27\n",
    env: "PORT=8080\n",
    has_secrets: true,
    ...overrides,
  };
}

function makeProgress(overrides: Partial<RunProgress> = {}): RunProgress {
  return {
    mode: "json",
    percent: 0,
    bytes_done: 0,
    bytes_total: 0,
    layers_done: 0,
    layers_total: 0,
    images: [],
    containers: [],
    lines: [],
    errors: [],
    ...overrides,
  };
}

export function makeRun(overrides: Partial<Omit<Run, "progress">> = {}, progress: Partial<RunProgress> = {}): Run {
  return {
    id: "run-1",
    stack: "web",
    action: "start",
    status: "running",
    started_at: "2025-03-01T10:00:00Z",
    finished_at: null,
    exit_code: null,
    output_hidden: false,
    ...overrides,
    progress: makeProgress(progress),
  };
}

/** The server's default policy (`UpdatePolicy()`), with `overrides`. */
export function makePolicy(overrides: Partial<UpdatePolicy> = {}): UpdatePolicy {
  return {
    mode: "notify",
    track: "digest",
    prereleases: false,
    health_timeout: 120,
    settle: 30,
    cooldown_hours: 0,
    window: null,
    window_minutes: 120,
    timezone: "UTC",
    ...overrides,
  };
}

/** An image of a stack that is up to date (nothing newer, no release read). */
export function makeImageUpdate(overrides: Partial<ImageUpdate> = {}): ImageUpdate {
  return {
    service: "app",
    image: "nginx:1.27",
    state: "up_to_date",
    local_digest: "sha256:aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111",
    remote_digest: "sha256:aaaaaaaaaaaa1111111111111111111111111111111111111111111111111111",
    checked_at: "2025-03-01T09:00:00Z",
    error: null,
    first_seen: null,
    rolled_back: false,
    new_tag: null,
    current_version: null,
    release: null,
    jump: null,
    ...overrides,
  };
}

export function makeStackUpdate(overrides: Partial<StackUpdate> = {}): StackUpdate {
  return {
    stack: "web",
    has_update: false,
    auto_update: false,
    last_auto_update: null,
    last_update: null,
    images: [makeImageUpdate()],
    policy: makePolicy(),
    policy_inherited: true,
    ...overrides,
  };
}

export function makeSummary(
  stacks: StackUpdate[],
  lastCheck: string | null = "2025-03-01T09:00:00Z",
  registries: RegistryQuota[] = [],
): UpdateSummary {
  return { last_check: lastCheck, stacks, registries };
}
