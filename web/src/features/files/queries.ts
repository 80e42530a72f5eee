import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { unwrap } from "../../api/errors";
import { hostApi, type HostId } from "../../api/hosts";
import type { TextFile } from "../../api/types";
import { hostKey, useHost } from "../hosts/host";

/** Every key names its host second: each host's stacks folder has its own cache. */
const fileKeys = {
  all: ["files"] as const,
  /** Prefix of every folder listing of a host: invalidate it after any change there. */
  folders: (host: HostId) => ["files", hostKey(host), "folder"] as const,
  folder: (host: HostId, path: string, hidden: boolean) => ["files", hostKey(host), "folder", path, hidden] as const,
  content: (host: HostId, path: string) => ["files", hostKey(host), "content", path] as const,
};

/** A folder's entries, folders first; dotfiles only with `hidden`. Admins only (403 otherwise). */
export function folderQueryOptions(host: HostId, path: string, hidden: boolean) {
  return queryOptions({
    queryKey: fileKeys.folder(host, path, hidden),
    queryFn: () => unwrap(hostApi(host).GET("/api/files", { params: { query: { path, hidden } } })),
  });
}

/** A text file and its version (sent back on save). Read fresh each time it is opened. */
export function fileContentQueryOptions(host: HostId, path: string) {
  return queryOptions({
    queryKey: fileKeys.content(host, path),
    queryFn: () => unwrap(hostApi(host).GET("/api/files/content", { params: { query: { path } } })),
    staleTime: Infinity,
    gcTime: 0,
  });
}

/** After any change on `host`: every folder listing there. */
export function invalidateFolders(queryClient: QueryClient, host: HostId): Promise<void> {
  return queryClient.invalidateQueries({ queryKey: fileKeys.folders(host) });
}

// Mutation hooks act on the page's host (`useHost()`).

export function useMakeFolder() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (path: string) => unwrap(hostApi(host).POST("/api/files/folder", { body: { path } })),
    onSettled: () => invalidateFolders(queryClient, host),
  });
}

/** A new, empty text file (`version: null`: refused with 409 when the name exists). */
export function useCreateFile() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (path: string) =>
      unwrap(hostApi(host).PUT("/api/files/content", { body: { path, content: "", version: null } })),
    onSettled: () => invalidateFolders(queryClient, host),
  });
}

/** Rename or move; never over an existing entry (409). */
export function useMoveEntry() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ source, destination }: { source: string; destination: string }) =>
      unwrap(hostApi(host).POST("/api/files/move", { body: { source, destination } })),
    onSettled: () => invalidateFolders(queryClient, host),
  });
}

/** A folder is deleted with `recursive` only after the user confirmed it. */
export function useDeleteEntry() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ path, recursive }: { path: string; recursive: boolean }) =>
      unwrap(hostApi(host).DELETE("/api/files", { params: { query: { path, recursive } } })),
    onSettled: () => invalidateFolders(queryClient, host),
  });
}

/** Saves with the version that was read: 409 when the file changed since. */
export function useSaveFile() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (file: TextFile) => unwrap(hostApi(host).PUT("/api/files/content", { body: file })),
    onSuccess: (saved, file) => {
      queryClient.setQueryData(fileKeys.content(host, file.path), { ...file, version: saved.version });
    },
    onSettled: () => invalidateFolders(queryClient, host),
  });
}
