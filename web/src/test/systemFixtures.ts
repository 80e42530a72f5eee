import type { LastUpdate, UpdateStatus } from "../api/types";

/** The status of a Stackyard that runs outside a container (as in development): no self-update. */
export const NOT_IN_CONTAINER = "The service is not running in a container: update it as you installed it";

export function makeUpdateStatus(overrides: Partial<UpdateStatus> = {}): UpdateStatus {
  return {
    update_supported: true,
    reason: null,
    current_version: "0.1.0",
    latest_version: "0.1.0",
    update_available: false,
    repository: "registry.lan:5000/stackyard",
    checked_at: "2025-03-01T10:00:00Z",
    check_error: null,
    last_update: null,
    ...overrides,
  };
}

/** A newer release, 0.2.0, is out. */
export function updateAvailable(overrides: Partial<UpdateStatus> = {}): UpdateStatus {
  return makeUpdateStatus({ latest_version: "0.2.0", update_available: true, ...overrides });
}

export function notSupported(overrides: Partial<UpdateStatus> = {}): UpdateStatus {
  return makeUpdateStatus({
    update_supported: false,
    reason: NOT_IN_CONTAINER,
    latest_version: null,
    repository: null,
    checked_at: null,
    ...overrides,
  });
}

export function makeLastUpdate(overrides: Partial<LastUpdate> = {}): LastUpdate {
  return {
    status: "succeeded",
    from_version: "0.0.9",
    to_version: "0.1.0",
    finished_at: "2025-02-20T09:00:00Z",
    output: "",
    why: "",
    helper: "",
    ...overrides,
  };
}
