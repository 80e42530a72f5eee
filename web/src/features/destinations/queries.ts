import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import { hostApi, LOCAL_HOST, type HostId } from "../../api/hosts";
import type { DestinationChange, NewDestination, NewRepository, Run, UnsavedDestinationTest } from "../../api/types";
import { backupKeys } from "../backups/queries";
import { useHost } from "../hosts/host";
import { invalidateStacks, stackKeys } from "../stacks/queries";

export const destinationKeys = {
  list: ["destinations"] as const,
  /** Prefix of every destination's remote archive list. */
  allArchives: ["destination-archives"] as const,
  archives: (id: number) => ["destination-archives", id] as const,
  /** Under its archives' key: what changes those (a push, a deletion) changes this too. */
  repositoryUse: (id: number) => ["destination-archives", id, "use"] as const,
};

/** Admin only. Secrets are never returned: `secrets_set` names those stored. */
export function destinationsQueryOptions() {
  return queryOptions({ queryKey: destinationKeys.list, queryFn: () => unwrap(api.GET("/api/destinations")) });
}

/** The archives Stackyard made that a destination holds, newest first (read from it each time). */
export function remoteArchivesQueryOptions(id: number) {
  return queryOptions({
    queryKey: destinationKeys.archives(id),
    queryFn: () =>
      unwrap(api.GET("/api/destinations/{destination_id}/archives", { params: { path: { destination_id: id } } })),
    staleTime: 0,
  });
}

/** A repository destination's use: stored against its backups as archives, per stack (read from it each time). */
export function repositoryUseQueryOptions(id: number) {
  return queryOptions({
    queryKey: destinationKeys.repositoryUse(id),
    queryFn: () =>
      unwrap(api.GET("/api/destinations/{destination_id}/repository", { params: { path: { destination_id: id } } })),
    staleTime: 0,
  });
}

function invalidateDestinations(queryClient: QueryClient): Promise<unknown> {
  return queryClient.invalidateQueries({ queryKey: destinationKeys.list });
}

export function useCreateDestination() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NewDestination) => unwrap(api.POST("/api/destinations", { body })),
    onSettled: () => invalidateDestinations(queryClient),
  });
}

/**
 * A repository destination: a new one made at its location (the answer holds the recovery
 * key, shown once), or with `recovery_key` the one there recovered, given a key of this
 * instance's. Slow: the repository is made or opened before the answer.
 */
export function useCreateRepository() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NewRepository) => unwrap(api.POST("/api/destinations/repositories", { body })),
    onSettled: () => invalidateDestinations(queryClient),
  });
}

/** Secrets left out are kept, an empty one is removed; `host_key: null` forgets the pinned key. */
export function useUpdateDestination() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, change }: { id: number; change: DestinationChange }) =>
      unwrap(api.PATCH("/api/destinations/{destination_id}", { params: { path: { destination_id: id } }, body: change })),
    onSettled: (_data, _error, { id }) =>
      Promise.all([
        invalidateDestinations(queryClient),
        queryClient.invalidateQueries({ queryKey: destinationKeys.archives(id) }),
      ]),
  });
}

/** Forgets the destination; the archives on it stay there. */
export function useDeleteDestination() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/destinations/{destination_id}", { params: { path: { destination_id: id } } })),
    onSuccess: (_data, id) => queryClient.removeQueries({ queryKey: destinationKeys.archives(id) }),
    onSettled: () => invalidateDestinations(queryClient),
  });
}

/** Tries settings before they are saved (an SFTP server's host key is shown, not pinned). */
export function useTestUnsavedDestination() {
  return useMutation({
    mutationFn: (body: UnsavedDestinationTest) => unwrap(api.POST("/api/destinations/test", { body })),
  });
}

/** Tests a saved destination; the first success pins an SFTP server's host key. */
export function useTestDestination() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/destinations/{destination_id}/test", { params: { path: { destination_id: id } } })),
    onSettled: () => invalidateDestinations(queryClient),
  });
}

export function useDeleteRemoteArchive(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) =>
      unwrap(
        api.DELETE("/api/destinations/{destination_id}/archives/{name}", {
          params: { path: { destination_id: id, name } },
        }),
      ),
    onSettled: () => queryClient.invalidateQueries({ queryKey: destinationKeys.archives(id) }),
  });
}

/**
 * What a transfer of `host`'s archives does once started and once ended. Destinations are the
 * central's: a transfer of this host's archive is the archive's stack's run (the deploy
 * console follows it); one of an agent's is the central's transfer run for that agent.
 */
function transferCallbacks(queryClient: QueryClient, host: HostId) {
  return {
    onSuccess: (run: Run) =>
      host === null
        ? queryClient.setQueryData(stackKeys.run(LOCAL_HOST, run.stack), run)
        : queryClient.setQueryData(stackKeys.transfer(host, run.stack), run),
    onSettled: () => invalidateStacks(queryClient, host),
  };
}

/** Downloads a remote archive into this host's archives; 409 when it is here already. */
export function usePullArchive(id: number) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) =>
      unwrap(
        api.POST("/api/destinations/{destination_id}/archives/{name}/pull", {
          params: { path: { destination_id: id, name } },
        }),
      ),
    ...transferCallbacks(queryClient, LOCAL_HOST),
  });
}

/**
 * Brings a destination's archive into `host`'s archives; 409 when it is there already. For
 * this host it is the pull above; for an agent the central fetches it and sends it on
 * (`/api/agents/{id}/destinations/{d}/archives/{name}/pull`): that run is the central's
 * transfer, followed as such (`stackRunQueryOptions(host, stack, true)`).
 */
export function usePullArchiveInto(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ destinationId, name }: { destinationId: number; name: string }) =>
      host === null
        ? unwrap(
            api.POST("/api/destinations/{destination_id}/archives/{name}/pull", {
              params: { path: { destination_id: destinationId, name } },
            }),
          )
        : unwrap(
            api.POST("/api/agents/{agent_id}/destinations/{destination_id}/archives/{name}/pull", {
              params: { path: { agent_id: host, destination_id: destinationId, name } },
            }),
          ),
    ...transferCallbacks(queryClient, host),
  });
}

/**
 * Uploads an archive of the page's host to a destination; 409 when it is there already. An
 * agent's archive goes through the central (`/api/agents/{id}/backups/{name}/push`): that run
 * is the central's transfer, followed as such (`stackRunQueryOptions(host, stack, true)`).
 */
export function usePushBackup() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ name, destinationId }: { name: string; destinationId: number }) =>
      unwrap(
        hostApi(host).POST("/api/backups/{name}/push", {
          params: { path: { name } },
          body: { destination_id: destinationId },
        }),
      ),
    ...transferCallbacks(queryClient, host),
  });
}

/** What a finished transfer changed: the local archives (a pull), a destination's (a push). */
export function invalidateAfterTransfer(queryClient: QueryClient): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: backupKeys.list(LOCAL_HOST) }),
    queryClient.invalidateQueries({ queryKey: destinationKeys.allArchives }),
  ]);
}
