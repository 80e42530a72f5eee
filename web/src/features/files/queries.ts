import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { TextFile } from "../../api/types";

const fileKeys = {
  all: ["files"] as const,
  /** Prefix of every folder listing: invalidate it after any change. */
  folders: ["files", "folder"] as const,
  folder: (path: string, hidden: boolean) => ["files", "folder", path, hidden] as const,
  content: (path: string) => ["files", "content", path] as const,
};

/** A folder's entries, folders first; dotfiles only with `hidden`. Admins only (403 otherwise). */
export function folderQueryOptions(path: string, hidden: boolean) {
  return queryOptions({
    queryKey: fileKeys.folder(path, hidden),
    queryFn: () => unwrap(api.GET("/api/files", { params: { query: { path, hidden } } })),
  });
}

/** A text file and its version (sent back on save). Read fresh each time it is opened. */
export function fileContentQueryOptions(path: string) {
  return queryOptions({
    queryKey: fileKeys.content(path),
    queryFn: () => unwrap(api.GET("/api/files/content", { params: { query: { path } } })),
    staleTime: Infinity,
    gcTime: 0,
  });
}

/** After any change: every folder listing. */
export function invalidateFolders(queryClient: QueryClient): Promise<void> {
  return queryClient.invalidateQueries({ queryKey: fileKeys.folders });
}

export function useMakeFolder() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (path: string) => unwrap(api.POST("/api/files/folder", { body: { path } })),
    onSettled: () => invalidateFolders(queryClient),
  });
}

/** A new, empty text file (`version: null`: refused with 409 when the name exists). */
export function useCreateFile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (path: string) => unwrap(api.PUT("/api/files/content", { body: { path, content: "", version: null } })),
    onSettled: () => invalidateFolders(queryClient),
  });
}

/** Rename or move; never over an existing entry (409). */
export function useMoveEntry() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ source, destination }: { source: string; destination: string }) =>
      unwrap(api.POST("/api/files/move", { body: { source, destination } })),
    onSettled: () => invalidateFolders(queryClient),
  });
}

/** A folder is deleted with `recursive` only after the user confirmed it. */
export function useDeleteEntry() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ path, recursive }: { path: string; recursive: boolean }) =>
      unwrap(api.DELETE("/api/files", { params: { query: { path, recursive } } })),
    onSettled: () => invalidateFolders(queryClient),
  });
}

/** Saves with the version that was read: 409 when the file changed since. */
export function useSaveFile() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (file: TextFile) => unwrap(api.PUT("/api/files/content", { body: file })),
    onSuccess: (saved, file) => {
      queryClient.setQueryData(fileKeys.content(file.path), { ...file, version: saved.version });
    },
    onSettled: () => invalidateFolders(queryClient),
  });
}
