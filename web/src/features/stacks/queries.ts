import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { ApiError, unwrap } from "../../api/errors";
import type { NewStack, Run, StackAction, StackDetail } from "../../api/types";
import { settingsKeys } from "../settings/queries";

export const stackKeys = {
  /** Prefix of the list and every detail: invalidate it after any change. */
  all: ["stacks"] as const,
  list: ["stacks", "list"] as const,
  detail: (id: string) => ["stacks", "detail", id] as const,
  /** The current or last run; kept apart so refreshing stacks never re-reads a run. */
  run: (id: string) => ["stack-run", id] as const,
  secrets: (id: string) => ["stack-secrets", id] as const,
  deletePlan: (id: string) => ["stack-delete-plan", id] as const,
  updates: ["stack-updates"] as const,
};

/** Polling of the stack list and a stack's detail. */
const STACKS_REFETCH_MS = 5_000;
/** Polling of the (cached, cheap) update summary. */
const UPDATES_REFETCH_MS = 60_000;

export function stacksQueryOptions() {
  return queryOptions({
    queryKey: stackKeys.list,
    queryFn: () => unwrap(api.GET("/api/stacks")),
    refetchInterval: STACKS_REFETCH_MS,
  });
}

export function stackQueryOptions(id: string) {
  return queryOptions({
    queryKey: stackKeys.detail(id),
    queryFn: () => unwrap(api.GET("/api/stacks/{stack_id}", { params: { path: { stack_id: id } } })),
    refetchInterval: STACKS_REFETCH_MS,
  });
}

/** Per stack, whether an image has a newer registry digest (read from the server's cache). */
export function stackUpdatesQueryOptions() {
  return queryOptions({
    queryKey: stackKeys.updates,
    queryFn: () => unwrap(api.GET("/api/stacks/updates")),
    refetchInterval: UPDATES_REFETCH_MS,
  });
}

/** The current or last run of a stack; null when it never ran anything. */
export function stackRunQueryOptions(id: string) {
  return queryOptions({
    queryKey: stackKeys.run(id),
    queryFn: async (): Promise<Run | null> => {
      try {
        return await unwrap(api.GET("/api/stacks/{stack_id}/run", { params: { path: { stack_id: id } } }));
      } catch (err) {
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
    // Live runs are kept fresh by the event stream, not by refetching.
    staleTime: Infinity,
  });
}

/** Admin only; loaded when the admin asks for it. */
export function stackSecretsQueryOptions(id: string) {
  return queryOptions({
    queryKey: stackKeys.secrets(id),
    queryFn: () => unwrap(api.GET("/api/stacks/{stack_id}/secrets", { params: { path: { stack_id: id } } })),
    staleTime: Infinity,
    gcTime: 0,
  });
}

/** Where the browser follows a stack's run (Server-Sent Events, same origin). */
export function runEventsUrl(id: string): string {
  return `/api/stacks/${encodeURIComponent(id)}/run/events`;
}

/** After any action or change: the list, every detail and the update summary. */
export function invalidateStacks(queryClient: QueryClient): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: stackKeys.all }),
    queryClient.invalidateQueries({ queryKey: stackKeys.updates }),
  ]);
}

function invalidateStacksAndAudit(queryClient: QueryClient): Promise<unknown> {
  return Promise.all([
    invalidateStacks(queryClient),
    queryClient.invalidateQueries({ queryKey: settingsKeys.audit }),
  ]);
}

/** Start / stop / restart / down / pull / update; the run is followed by the deploy console. */
export function useStackAction() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: string; action: StackAction }) =>
      unwrap(api.POST("/api/stacks/{stack_id}/actions/{action}", { params: { path: { stack_id: id, action } } })),
    onSuccess: (run, { id }) => {
      queryClient.setQueryData(stackKeys.run(id), run);
    },
    onSettled: () => invalidateStacks(queryClient),
  });
}

/** "Check now": ask the registries and take the fresh summary. */
export function useCheckUpdates() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/stacks/updates/check")),
    onSuccess: (summary) => {
      queryClient.setQueryData(stackKeys.updates, summary);
    },
  });
}

export function useCreateStack() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NewStack) => unwrap(api.POST("/api/stacks", { body })),
    onSuccess: (stack) => {
      queryClient.setQueryData(stackKeys.detail(stack.id), stack);
    },
    onSettled: () => invalidateStacksAndAudit(queryClient),
  });
}

export type StackFileKind = "compose" | "env";

/** Saves compose.yaml or .env; a 400 carries compose's validation error and the old file stays. */
export function useSaveStackFile(id: string, kind: StackFileKind) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (content: string): Promise<StackDetail> => {
      const params = { path: { stack_id: id } };
      return kind === "compose"
        ? unwrap(api.PUT("/api/stacks/{stack_id}/compose", { params, body: { content } }))
        : unwrap(api.PUT("/api/stacks/{stack_id}/env", { params, body: { content } }));
    },
    onSuccess: (stack) => {
      queryClient.setQueryData(stackKeys.detail(id), stack);
    },
    onSettled: () => invalidateStacks(queryClient),
  });
}

export function useSaveSecrets(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (content: string) =>
      unwrap(api.PUT("/api/stacks/{stack_id}/secrets", { params: { path: { stack_id: id } }, body: { content } })),
    onSuccess: (_data, content) => {
      queryClient.setQueryData(stackKeys.secrets(id), { content });
    },
    onSettled: () => invalidateStacksAndAudit(queryClient),
  });
}

export function useSetAutoUpdate(id: string) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (enabled: boolean) =>
      unwrap(api.PUT("/api/stacks/{stack_id}/auto-update", { params: { path: { stack_id: id } }, body: { enabled } })),
    onSettled: () => invalidateStacks(queryClient),
  });
}

/** Admin: what deleting the stack does (containers, networks, volumes, the folder). */
export function stackDeletePlanQueryOptions(id: string) {
  return queryOptions({
    queryKey: stackKeys.deletePlan(id),
    queryFn: () =>
      unwrap(api.GET("/api/stacks/{stack_id}/delete-plan", { params: { path: { stack_id: id } } })),
    staleTime: 0,
    gcTime: 0,
  });
}

/**
 * Admin: `compose down` (named volumes only when asked), then the folder is moved aside to
 * `.trash` in the stacks folder. `confirm` is the stack's name as the user typed it: the
 * server refuses anything but the exact id.
 */
export function useDeleteStack() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, confirm, removeVolumes }: { id: string; confirm: string; removeVolumes: boolean }) =>
      unwrap(
        api.DELETE("/api/stacks/{stack_id}", {
          params: { path: { stack_id: id }, query: { confirm, remove_volumes: removeVolumes } },
        }),
      ),
    onSuccess: (_data, { id }) => {
      queryClient.removeQueries({ queryKey: stackKeys.detail(id) });
      queryClient.removeQueries({ queryKey: stackKeys.run(id) });
      queryClient.removeQueries({ queryKey: stackKeys.secrets(id) });
      queryClient.removeQueries({ queryKey: stackKeys.deletePlan(id) });
    },
    onSettled: () => invalidateStacksAndAudit(queryClient),
  });
}
