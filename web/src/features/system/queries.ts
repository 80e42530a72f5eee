import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import { hostApi, type HostId } from "../../api/hosts";
import type { Health, UpdateStatus } from "../../api/types";
import { agentKeys } from "../agents/queries";
import { fleetKeys } from "../dashboard/queries";
import { hostKey } from "../hosts/host";
import { settingsKeys } from "../settings/queries";

/** Each host's update status is its own (an agent's is read through the central's proxy). */
export const systemKeys = {
  /** Prefix of every host's update status. */
  allUpdates: ["system-update"] as const,
  update: (host: HostId) => ["system-update", hostKey(host)] as const,
};

/** The server asks the registry at most every 10 minutes; the UI reads its answer as often. */
const UPDATE_STALE_MS = 60_000;
const UPDATE_REFETCH_MS = 10 * 60_000;

/**
 * `host`'s running version, its latest release, whether it can update itself (and why not)
 * and the outcome of its last update (`GET /api/system/update`, `/api/agents/{id}/system/update`).
 */
export function updateStatusQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: systemKeys.update(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/system/update")),
    staleTime: UPDATE_STALE_MS,
    refetchInterval: UPDATE_REFETCH_MS,
  });
}

/** Reads `host`'s update status afresh: the server asks the registry now (`?fresh=true`). */
export function readUpdateStatus(host: HostId, options: { fresh?: boolean; signal?: AbortSignal } = {}): Promise<UpdateStatus> {
  return unwrap(
    hostApi(host).GET("/api/system/update", {
      params: { query: options.fresh ? { fresh: true } : {} },
      signal: options.signal,
      cache: "no-store",
    }),
  );
}

/** The central's health (no sign-in needed): what the running process answers, never a cached copy. */
export function readHealth(signal?: AbortSignal): Promise<Health> {
  return unwrap(api.GET("/api/health", { signal, cache: "no-store" }));
}

/** "Check now": the registry is asked at once instead of the 10-minute cache. */
export function useCheckForUpdate(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => readUpdateStatus(host, { fresh: true }),
    onSuccess: (status) => queryClient.setQueryData(systemKeys.update(host), status),
  });
}

/**
 * Admins: `host` pulls its latest release and restarts on it (202 with the versions). A 400
 * says why this installation cannot update itself, a 409 that it runs the latest already,
 * a 503 that the pull failed (nothing changed): the status is read again then.
 */
export function useStartUpdate(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(hostApi(host).POST("/api/system/update")),
    onError: () => queryClient.invalidateQueries({ queryKey: systemKeys.update(host) }),
  });
}

/** Once an agent answers its new version: its record (version, compatibility) and the fleet are refreshed. */
export function useAgentUpdated() {
  const queryClient = useQueryClient();
  return async (id: number) => {
    // A test refreshes the version the central keeps on the agent's record.
    try {
      await unwrap(api.POST("/api/agents/{agent_id}/test", { params: { path: { agent_id: id } } }));
    } catch {
      // The record keeps what it had; the list below says what is known.
    }
    await Promise.all([
      queryClient.invalidateQueries({ queryKey: systemKeys.update(id) }),
      queryClient.invalidateQueries({ queryKey: agentKeys.list }),
      queryClient.invalidateQueries({ queryKey: fleetKeys.all }),
      // The test is audited, and is no mutation: the query client's re-read of the audit
      // log after every mutation does not see it.
      queryClient.invalidateQueries({ queryKey: settingsKeys.audit }),
    ]);
  };
}
