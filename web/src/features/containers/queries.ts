import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { ApiError, unwrap } from "../../api/errors";
import { hostApi, hostPath, type HostId } from "../../api/hosts";
import type { ContainerAction } from "../../api/types";
import { hostKey } from "../hosts/host";

export const containerKeys = {
  usage: (host: HostId) => ["host-usage", hostKey(host)] as const,
  outside: (host: HostId) => ["outside-containers", hostKey(host)] as const,
  history: (host: HostId, stackId: string) => ["usage-history", hostKey(host), stackId] as const,
};

/** The history has a point every 10 s: read about as often. */
const HISTORY_REFETCH_MS = 10_000;

/** CPU and memory of a stack's containers over the last 15 minutes (null: an agent too old to keep it). */
export function usageHistoryQueryOptions(host: HostId, stackId: string) {
  return queryOptions({
    queryKey: containerKeys.history(host, stackId),
    queryFn: async () => {
      try {
        return await unwrap(
          hostApi(host).GET("/api/stacks/{stack_id}/usage/history", { params: { path: { stack_id: stackId } } }),
        );
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
    refetchInterval: HISTORY_REFETCH_MS,
  });
}

/** How often the list of containers outside the stacks is read while shown. */
const OUTSIDE_REFETCH_MS = 10_000;

/** The containers of `host` that no stack owns. */
export function outsideContainersQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: containerKeys.outside(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/containers")),
    refetchInterval: OUTSIDE_REFETCH_MS,
  });
}

/** Admin: start, stop or restart a container outside the stacks (audited). */
export function useOutsideContainerAction(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, action }: { name: string; action: ContainerAction }) =>
      unwrap(
        hostApi(host).POST("/api/containers/{name}/actions/{action}", { params: { path: { name, action } } }),
      ),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: containerKeys.outside(host) }),
        queryClient.invalidateQueries({ queryKey: containerKeys.usage(host) }),
      ]),
  });
}

/** The live log of a container outside the stacks (Server-Sent Events of `LogBatch`). */
export function outsideLogUrl(host: HostId, name: string): string {
  return hostPath(`/api/containers/${encodeURIComponent(name)}/logs`, host);
}

/** How often resource use is read while a page shows it (the engine samples every second). */
export const USAGE_REFETCH_MS = 2_000;

/** Every running container's use on `host`: one call, whatever page asks. */
export function usageQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: containerKeys.usage(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/usage")),
    refetchInterval: USAGE_REFETCH_MS,
  });
}
