import { queryOptions, useMutation, useQueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { ArchiveInfo, NewBackup, RestoreOptions } from "../../api/types";
import { apiUrl, putWithProgress } from "../../api/upload";
import { settingsKeys } from "../settings/queries";
import { invalidateStacks, stackKeys } from "../stacks/queries";

export const backupKeys = {
  list: ["backups"] as const,
  inventory: (stackId: string) => ["backup-inventory", stackId] as const,
  manifest: (name: string) => ["backup", name] as const,
};

export function backupsQueryOptions() {
  return queryOptions({ queryKey: backupKeys.list, queryFn: () => unwrap(api.GET("/api/backups")) });
}

/** Measured through helper containers when asked (it takes a moment): never cached long. */
export function inventoryQueryOptions(stackId: string) {
  return queryOptions({
    queryKey: backupKeys.inventory(stackId),
    queryFn: () =>
      unwrap(api.GET("/api/stacks/{stack_id}/backup/inventory", { params: { path: { stack_id: stackId } } })),
    staleTime: 0,
    gcTime: 0,
  });
}

export function manifestQueryOptions(name: string) {
  return queryOptions({
    queryKey: backupKeys.manifest(name),
    queryFn: () => unwrap(api.GET("/api/backups/{name}", { params: { path: { name } } })),
    staleTime: Infinity,
  });
}

/** Starts a backup; its progress is the stack's run (the deploy console follows it). */
export function useCreateBackup(stackId: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NewBackup) =>
      unwrap(api.POST("/api/stacks/{stack_id}/backups", { params: { path: { stack_id: stackId } }, body })),
    onSuccess: (run) => queryClient.setQueryData(stackKeys.run(stackId), run),
    onSettled: () => invalidateStacks(queryClient),
  });
}

/** Starts a restore; its progress is the run of the stack it restores into. */
export function useRestoreBackup() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ name, options }: { name: string; options: RestoreOptions }) =>
      unwrap(api.POST("/api/backups/{name}/restore", { params: { path: { name } }, body: options })),
    onSuccess: (run) => queryClient.setQueryData(stackKeys.run(run.stack), run),
    onSettled: () =>
      Promise.all([invalidateStacks(queryClient), queryClient.invalidateQueries({ queryKey: settingsKeys.audit })]),
  });
}

export function useDeleteBackup() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => unwrap(api.DELETE("/api/backups/{name}", { params: { path: { name } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: backupKeys.list }),
  });
}

export function useVerifyBackup() {
  return useMutation({
    mutationFn: (name: string) => unwrap(api.POST("/api/backups/{name}/verify", { params: { path: { name } } })),
  });
}

/** The download of an archive: a plain link (the browser streams it to disk). */
export function backupDownloadUrl(name: string): string {
  return `/api/backups/${encodeURIComponent(name)}/download`;
}

/** Uploads an archive made elsewhere, with its progress; the server checks it through. */
export function uploadBackup(file: File, onProgress: (sent: number) => void, signal?: AbortSignal) {
  return putWithProgress<ArchiveInfo>(apiUrl("/api/backups/upload"), file, {
    contentType: "application/x-tar",
    onProgress,
    signal,
  });
}
