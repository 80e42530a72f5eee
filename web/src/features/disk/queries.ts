import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { unwrap } from "../../api/errors";
import { hostApi, type HostId } from "../../api/hosts";
import type { PruneOptions, PrunePreview } from "../../api/types";
import { hostKey } from "../hosts/host";

export const diskKeys = {
  report: (host: HostId) => ["disk", hostKey(host)] as const,
  prunes: (host: HostId) => ["disk-prunes", hostKey(host)] as const,
};

/**
 * A host's images, volumes, networks, containers of no stack and build cache, with what uses
 * each. The engine measures it anew for each read (`docker system df`, slow on a NAS), so it
 * is read when the page opens, after each action, and when asked ("Measure again"), not on a
 * timer.
 */
export function diskQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: diskKeys.report(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/disk")),
    staleTime: 30_000,
  });
}

/** The host's last prunes (by hand or by a schedule), newest first. */
export function prunesQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: diskKeys.prunes(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/disk/prunes")),
  });
}

function invalidateDisk(queryClient: QueryClient, host: HostId): Promise<unknown> {
  return queryClient.invalidateQueries({ queryKey: diskKeys.report(host) });
}

/** Pull `repository:tag` (operators: of a repository one of the host's stacks names). */
export function usePullImage(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (reference: string) =>
      unwrap(hostApi(host).POST("/api/disk/images/pull", { body: { reference } })),
    onSuccess: () => invalidateDisk(queryClient, host),
  });
}

/** Remove an image with each of its tags; refused (409) while a container uses it. */
export function useRemoveImage(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(hostApi(host).DELETE("/api/disk/images/{image_id}", { params: { path: { image_id: id } } })),
    onSuccess: () => invalidateDisk(queryClient, host),
  });
}

/** Admin: remove a volume and its data, its name typed as the confirmation; refused (409) while in use. */
export function useRemoveVolume(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, confirm }: { name: string; confirm: string }) =>
      unwrap(
        hostApi(host).DELETE("/api/disk/volumes/{name}", { params: { path: { name }, query: { confirm } } }),
      ),
    onSuccess: () => invalidateDisk(queryClient, host),
  });
}

/** Admin: remove a network; refused (409) while a container is attached. */
export function useRemoveNetwork(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(hostApi(host).DELETE("/api/disk/networks/{network_id}", { params: { path: { network_id: id } } })),
    onSuccess: () => invalidateDisk(queryClient, host),
  });
}

/** Admin: what a prune with `options` would remove and free, and what it never takes. Nothing is removed. */
export function usePrunePreview(host: HostId) {
  return useMutation({
    mutationFn: (options: PruneOptions) => unwrap(hostApi(host).POST("/api/disk/prune/preview", { body: options })),
  });
}

/** The ids a prune of `preview` sends: exactly the objects it listed, as `kind:id`. */
export function pruneIds(preview: PrunePreview): string[] {
  return preview.items.map((item) => `${item.kind}:${item.id}`);
}

/** Admin: remove the objects of a preview (nothing else), and say what was freed and what was left. */
export function usePrune(host: HostId) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (preview: PrunePreview) =>
      unwrap(hostApi(host).POST("/api/disk/prune", { body: { options: preview.options, ids: pruneIds(preview) } })),
    onSettled: () =>
      Promise.all([
        invalidateDisk(queryClient, host),
        queryClient.invalidateQueries({ queryKey: diskKeys.prunes(host) }),
      ]),
  });
}
