import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { ApiError, unwrap } from "../../api/errors";
import { hostApi, type HostId } from "../../api/hosts";
import type {
  GitRepositorySpec,
  GitStackChange,
  GitStackSource,
  GitStackView,
  NewGitStack,
} from "../../api/types";
import { hostKey, useHost } from "../hosts/host";
import { invalidateStacks } from "../stacks/queries";

/**
 * Every key names its host second (`hostKey`), as the stacks' do: a host's repositories and
 * git stacks are its own (an agent's stacks fetch from the agent's host).
 */
export const gitKeys = {
  all: ["git"] as const,
  /** Prefix of everything git of a host: invalidated after a sync, an apply, a new stack. */
  host: (host: HostId) => ["git", hostKey(host)] as const,
  repositories: (host: HostId) => ["git", hostKey(host), "repositories"] as const,
  stack: (host: HostId, id: string) => ["git", hostKey(host), "stack", id] as const,
  preview: (host: HostId, id: string, commit: string) => ["git", hostKey(host), "preview", id, commit] as const,
};

/** A git stack's view is polled: a webhook or the poll may sync it meanwhile. */
const GIT_STACK_REFETCH_MS = 10_000;

function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

/**
 * The host's repositories (every signed-in user may read them; never a secret). `null`
 * when the host serves no git routes (an agent of an earlier version answers 404).
 */
export function gitRepositoriesQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: gitKeys.repositories(host),
    queryFn: async () => {
      try {
        return await unwrap(hostApi(host).GET("/api/git/repositories"));
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
  });
}

/**
 * The stack's git side: null when it is not from git (or its host serves no git routes).
 * Polled, since a sync may happen at any time.
 */
export function gitStackQueryOptions(host: HostId, id: string) {
  return queryOptions({
    queryKey: gitKeys.stack(host, id),
    queryFn: async (): Promise<GitStackView | null> => {
      try {
        return await unwrap(hostApi(host).GET("/api/git/stacks/{stack_id}", { params: { path: { stack_id: id } } }));
      } catch (err) {
        if (isNotFound(err)) return null;
        throw err;
      }
    },
    refetchInterval: (query) => (query.state.data ? GIT_STACK_REFETCH_MS : false),
  });
}

/** What applying `commit` would change in the stack (operators and admins); read when asked. */
export function gitPreviewQueryOptions(host: HostId, id: string, commit: string) {
  return queryOptions({
    queryKey: gitKeys.preview(host, id, commit),
    queryFn: () =>
      unwrap(
        hostApi(host).GET("/api/git/stacks/{stack_id}/preview", {
          params: { path: { stack_id: id }, query: { commit } },
        }),
      ),
    staleTime: 0,
    gcTime: 0,
  });
}

/** After a change to a host's git side: its repositories, git stacks and previews. */
function invalidateGit(queryClient: QueryClient, host: HostId): Promise<unknown> {
  return queryClient.invalidateQueries({ queryKey: gitKeys.host(host) });
}

/** After work that may deploy stacks too (a sync, an apply, an adoption). */
function invalidateGitAndStacks(queryClient: QueryClient, host: HostId): Promise<unknown> {
  return Promise.all([invalidateGit(queryClient, host), invalidateStacks(queryClient, host)]);
}

// Mutation hooks act on the host of the page they are used on (`useHost()`).

/** Admin: a new repository (`id` null) or new settings of one; a null token keeps the kept one. */
export function useSaveRepository() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ id, spec }: { id: string | null; spec: GitRepositorySpec }) => {
      const client = hostApi(host);
      return id === null
        ? unwrap(client.POST("/api/git/repositories", { body: spec }))
        : unwrap(client.PUT("/api/git/repositories/{repo_id}", { params: { path: { repo_id: id } }, body: spec }));
    },
    onSettled: () => invalidateGit(queryClient, host),
  });
}

/** Admin: refused (409, its detail names them) while stacks come from the repository. */
export function useDeleteRepository() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(hostApi(host).DELETE("/api/git/repositories/{repo_id}", { params: { path: { repo_id: id } } })),
    onSettled: () => invalidateGit(queryClient, host),
  });
}

/** Operators too: fetch now, and each stack of the repository as its policy says. */
export function useSyncRepository() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(hostApi(host).POST("/api/git/repositories/{repo_id}/sync", { params: { path: { repo_id: id } } })),
    onSettled: () => invalidateGitAndStacks(queryClient, host),
  });
}

/** Admin: a new webhook secret, answered this once (the old one stops working). */
export function useNewWebhook() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(hostApi(host).POST("/api/git/repositories/{repo_id}/webhook", { params: { path: { repo_id: id } } })),
    onSettled: () => invalidateGit(queryClient, host),
  });
}

/** Admin: a new deploy key (its public half goes to the git host; the old one stops working here). */
export function useNewDeployKey() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(hostApi(host).POST("/api/git/repositories/{repo_id}/deploy-key", { params: { path: { repo_id: id } } })),
    onSettled: () => invalidateGit(queryClient, host),
  });
}

/** Admin: forget the pinned SSH host key, or pin the one the server shows now. */
export function useHostKey() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ id, pin }: { id: string; pin: boolean }) => {
      const params = { path: { repo_id: id } };
      const client = hostApi(host);
      return pin
        ? unwrap(client.POST("/api/git/repositories/{repo_id}/host-key", { params }))
        : unwrap(client.DELETE("/api/git/repositories/{repo_id}/host-key", { params }));
    },
    onSettled: () => invalidateGit(queryClient, host),
  });
}

/** Admin: a new stack of a repository folder; the answer comes once it is deployed. */
export function useCreateGitStack() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (body: NewGitStack) => unwrap(hostApi(host).POST("/api/git/stacks", { body })),
    onSuccess: (view) => {
      queryClient.setQueryData(gitKeys.stack(host, view.stack), view);
    },
    onSettled: () => invalidateGitAndStacks(queryClient, host),
  });
}

/** Admin: what pointing an existing stack at a repository folder would change (nothing changes). */
export function usePreviewAdoption(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (body: GitStackSource) =>
      unwrap(hostApi(host).POST("/api/git/stacks/{stack_id}/adoption", { params: { path: { stack_id: id } }, body })),
    // (It fetched: the repository's last fetch is new.)
    onSettled: () => queryClient.invalidateQueries({ queryKey: gitKeys.repositories(host) }),
  });
}

/** Admin: the stack made of the folder at the commit its preview showed, deployed. */
export function useAdoptGitStack(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (body: GitStackSource & { commit: string }) =>
      unwrap(hostApi(host).POST("/api/git/stacks/{stack_id}/adopt", { params: { path: { stack_id: id } }, body })),
    onSuccess: (view) => {
      queryClient.setQueryData(gitKeys.stack(host, id), view);
    },
    onSettled: () => invalidateGitAndStacks(queryClient, host),
  });
}

/** Admin: the stack's policy, or whether its files may be edited here. */
export function useChangeGitStack(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (body: GitStackChange) =>
      unwrap(hostApi(host).PATCH("/api/git/stacks/{stack_id}", { params: { path: { stack_id: id } }, body })),
    onSuccess: (view) => {
      queryClient.setQueryData(gitKeys.stack(host, id), view);
    },
    onSettled: () => invalidateGit(queryClient, host),
  });
}

/** Admin: the stack is no longer from git; its files stay, editable. */
export function useDetachGitStack(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: () =>
      unwrap(hostApi(host).DELETE("/api/git/stacks/{stack_id}", { params: { path: { stack_id: id } } })),
    onSuccess: () => {
      queryClient.setQueryData(gitKeys.stack(host, id), null);
    },
    onSettled: () => invalidateGitAndStacks(queryClient, host),
  });
}

/**
 * Operators too: the commit deployed through the health gate (the answer comes once it is
 * over); `overwrite` confirms that files edited here are overwritten (kept in .trash first).
 */
export function useApplyGitChange(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (body: { commit: string; overwrite: boolean }) =>
      unwrap(hostApi(host).POST("/api/git/stacks/{stack_id}/apply", { params: { path: { stack_id: id } }, body })),
    onSettled: () => invalidateGitAndStacks(queryClient, host),
  });
}
