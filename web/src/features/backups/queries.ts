import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { unwrap } from "../../api/errors";
import { hostApi, hostPath, type HostId } from "../../api/hosts";
import type { ArchiveInfo, NewBackup, RestoreOptions } from "../../api/types";
import { apiUrl, putWithProgress } from "../../api/upload";
import { hostKey, useHost } from "../hosts/host";
import { invalidateStacks, stackKeys } from "../stacks/queries";

/** Every key names its host second: each host keeps its own archives. */
export const backupKeys = {
  /** Prefix of every host's archive list. */
  all: ["backups"] as const,
  list: (host: HostId) => ["backups", hostKey(host)] as const,
  inventory: (host: HostId, stackId: string) => ["backup-inventory", hostKey(host), stackId] as const,
  manifest: (host: HostId, name: string) => ["backup", hostKey(host), name] as const,
  /** Prefix of every host's restore drills. */
  allDrills: ["drills"] as const,
  drills: (host: HostId, stackId: string) => ["drills", hostKey(host), stackId] as const,
};

export function backupsQueryOptions(host: HostId) {
  return queryOptions({ queryKey: backupKeys.list(host), queryFn: () => unwrap(hostApi(host).GET("/api/backups")) });
}

/** Measured through helper containers when asked (it takes a moment): never cached long. */
export function inventoryQueryOptions(host: HostId, stackId: string) {
  return queryOptions({
    queryKey: backupKeys.inventory(host, stackId),
    queryFn: () =>
      unwrap(
        hostApi(host).GET("/api/stacks/{stack_id}/backup/inventory", { params: { path: { stack_id: stackId } } }),
      ),
    staleTime: 0,
    gcTime: 0,
  });
}

export function manifestQueryOptions(host: HostId, name: string) {
  return queryOptions({
    queryKey: backupKeys.manifest(host, name),
    queryFn: () => unwrap(hostApi(host).GET("/api/backups/{name}", { params: { path: { name } } })),
    staleTime: Infinity,
  });
}

/** What a restore with these options would write (nothing is written): asked again as
 * the options change, never cached. */
export function restorePreviewQueryOptions(host: HostId, name: string, options: RestoreOptions) {
  return queryOptions({
    queryKey: ["restore-preview", hostKey(host), name, options] as const,
    queryFn: () =>
      unwrap(
        hostApi(host).POST("/api/backups/{name}/restore/preview", { params: { path: { name } }, body: options }),
      ),
    staleTime: 0,
    gcTime: 0,
  });
}

/** A stack's restore drills on `host`, newest first. */
export function drillsQueryOptions(host: HostId, stackId: string) {
  return queryOptions({
    queryKey: backupKeys.drills(host, stackId),
    queryFn: () =>
      unwrap(hostApi(host).GET("/api/stacks/{stack_id}/drills", { params: { path: { stack_id: stackId } } })),
  });
}

// Mutation hooks act on the page's host (`useHost()`).

/** Starts a backup; its progress is the stack's run (the deploy console follows it). */
export function useCreateBackup(stackId: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (body: NewBackup) =>
      unwrap(hostApi(host).POST("/api/stacks/{stack_id}/backups", { params: { path: { stack_id: stackId } }, body })),
    onSuccess: (run) => queryClient.setQueryData(stackKeys.run(host, stackId), run),
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

/** Starts a restore; its progress is the run of the stack it restores into. */
export function useRestoreBackup() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ name, options }: { name: string; options: RestoreOptions }) =>
      unwrap(hostApi(host).POST("/api/backups/{name}/restore", { params: { path: { name } }, body: options })),
    onSuccess: (run) => queryClient.setQueryData(stackKeys.run(host, run.stack), run),
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

/**
 * Starts a restore drill of an archive (restored into a scratch clone, compared, started
 * isolated, removed); its progress is the run of the archive's stack.
 */
export function useDrillBackup() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ name, settleSeconds }: { name: string; settleSeconds: number }) =>
      unwrap(
        hostApi(host).POST("/api/backups/{name}/drill", {
          params: { path: { name } },
          body: { settle_seconds: settleSeconds },
        }),
      ),
    onSuccess: (run) => queryClient.setQueryData(stackKeys.run(host, run.stack), run),
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

export function useDeleteBackup() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (name: string) => unwrap(hostApi(host).DELETE("/api/backups/{name}", { params: { path: { name } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: backupKeys.list(host) }),
  });
}

export function useVerifyBackup() {
  const host = useHost();
  return useMutation({
    mutationFn: (name: string) =>
      unwrap(hostApi(host).POST("/api/backups/{name}/verify", { params: { path: { name } } })),
  });
}

/** The download of an archive on `host`: a plain link (the browser streams it to disk). */
export function backupDownloadUrl(host: HostId, name: string): string {
  return hostPath(`/api/backups/${encodeURIComponent(name)}/download`, host);
}

/**
 * Uploads an archive made elsewhere to `host`, with its progress; the host checks it
 * through. An archive of the same name there is a 409 unless `keepBoth`.
 */
export function uploadBackup(
  host: HostId,
  file: File,
  onProgress: (sent: number) => void,
  { keepBoth = false, signal }: { keepBoth?: boolean; signal?: AbortSignal } = {},
) {
  const url = `/api/backups/upload${keepBoth ? "?keep_both=true" : ""}`;
  return putWithProgress<ArchiveInfo>(apiUrl(hostPath(url, host)), file, {
    contentType: "application/x-tar",
    onProgress,
    signal,
  });
}
