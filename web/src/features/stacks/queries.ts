import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { ApiError, unwrap } from "../../api/errors";
import { hostApi, hostPath, type HostId } from "../../api/hosts";
import type { DeleteResult, NewStack, Run, StackAction, StackDetail, UpdatePolicy } from "../../api/types";
import { hostKey, useHost } from "../hosts/host";

/** Every key names its host second (`hostKey`): each host has its own cache. */
export const stackKeys = {
  /** Prefix of every host's lists and details. */
  all: ["stacks"] as const,
  /** Prefix of a host's list and every detail: invalidate it after any change there. */
  host: (host: HostId) => ["stacks", hostKey(host)] as const,
  list: (host: HostId) => ["stacks", hostKey(host), "list"] as const,
  detail: (host: HostId, id: string) => ["stacks", hostKey(host), "detail", id] as const,
  /** The current or last run; kept apart so refreshing stacks never re-reads a run. */
  run: (host: HostId, id: string) => ["stack-run", hostKey(host), id] as const,
  /** What this page called the run it started, when not its action ("deploy": a start after a save). */
  runName: (host: HostId, id: string) => ["stack-run-name", hostKey(host), id] as const,
  secrets: (host: HostId, id: string) => ["stack-secrets", hostKey(host), id] as const,
  deletePlan: (host: HostId, id: string) => ["stack-delete-plan", hostKey(host), id] as const,
  /** A push or pull of an agent's archives of the stack: a run of the central, not of the agent. */
  transfer: (agent: number, id: string) => ["transfer-run", agent, id] as const,
  /** Prefix of every host's update summary. */
  allUpdates: ["stack-updates"] as const,
  updates: (host: HostId) => ["stack-updates", hostKey(host)] as const,
  /** The host's default update policy (that of every stack without its own). */
  defaultPolicy: (host: HostId) => ["stack-update-policy", hostKey(host)] as const,
};

/** Polling of the stack list and a stack's detail. */
const STACKS_REFETCH_MS = 5_000;
/** Polling of the (cached, cheap) update summary. */
const UPDATES_REFETCH_MS = 60_000;

export function stacksQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: stackKeys.list(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/stacks")),
    refetchInterval: STACKS_REFETCH_MS,
  });
}

/** A stack's detail, polled while it is there: a stack that is gone (404) is not asked for again. */
export function stackQueryOptions(host: HostId, id: string) {
  return queryOptions({
    queryKey: stackKeys.detail(host, id),
    queryFn: () => unwrap(hostApi(host).GET("/api/stacks/{stack_id}", { params: { path: { stack_id: id } } })),
    refetchInterval: (query) => (isNotFound(query.state.error) ? false : STACKS_REFETCH_MS),
  });
}

function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

/**
 * Per stack, whether an image has a newer registry digest (read from the host's cache),
 * polled every 60 s; for an agent it is `GET /api/agents/{id}/stacks/updates`.
 */
export function stackUpdatesQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: stackKeys.updates(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/stacks/updates")),
    refetchInterval: UPDATES_REFETCH_MS,
  });
}

/**
 * The current or last run of a stack on `host`; null when it never ran anything. With
 * `transfer` on an agent: the current or last push or pull of the stack's archives there,
 * which the central runs (the destinations are its own), so the run is the central's.
 */
export function stackRunQueryOptions(host: HostId, id: string, transfer = false) {
  const agent = transfer ? host : null;
  return queryOptions({
    queryKey: agent === null ? stackKeys.run(host, id) : stackKeys.transfer(agent, id),
    queryFn: async (): Promise<Run | null> => {
      try {
        if (agent !== null) {
          const path = { agent_id: agent, stack_id: id };
          return await unwrap(api.GET("/api/agents/{agent_id}/transfers/{stack_id}/run", { params: { path } }));
        }
        return await unwrap(hostApi(host).GET("/api/stacks/{stack_id}/run", { params: { path: { stack_id: id } } }));
      } catch (err) {
        // An agent of an earlier version answers a stack that never ran with a 404.
        if (err instanceof ApiError && err.status === 404) return null;
        throw err;
      }
    },
    // Live runs are kept fresh by the event stream, not by refetching.
    staleTime: Infinity,
  });
}

/**
 * What the console calls a run: its action, or the name the page that started it gave it
 * (a start after "Save and deploy" is the deploy). Kept in this tab only.
 */
export function runNameQueryOptions(host: HostId, id: string) {
  return queryOptions({
    queryKey: stackKeys.runName(host, id),
    queryFn: (): { run: string; name: string } | null => null,
    staleTime: Infinity,
    gcTime: Infinity,
  });
}

/** Admin only; loaded when the admin asks for it. */
export function stackSecretsQueryOptions(host: HostId, id: string) {
  return queryOptions({
    queryKey: stackKeys.secrets(host, id),
    queryFn: () => unwrap(hostApi(host).GET("/api/stacks/{stack_id}/secrets", { params: { path: { stack_id: id } } })),
    staleTime: Infinity,
    gcTime: 0,
  });
}

/** Where the browser follows a stack's run on `host` (Server-Sent Events, same origin); `transfer` as above. */
export function runEventsUrl(host: HostId, id: string, transfer = false): string {
  if (transfer && host !== null) return `/api/agents/${host}/transfers/${encodeURIComponent(id)}/run/events`;
  return hostPath(`/api/stacks/${encodeURIComponent(id)}/run/events`, host);
}

/** After any action or change on `host`: its list, every detail and its update summary. */
export function invalidateStacks(queryClient: QueryClient, host: HostId): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: stackKeys.host(host) }),
    queryClient.invalidateQueries({ queryKey: stackKeys.updates(host) }),
  ]);
}

// Mutation hooks act on the host of the page they are used on (`useHost()`: the address's
// `?host=`), and invalidate that host's queries.

/** Start / stop / restart / down / pull / update; the run is followed by the deploy console. */
export function useStackAction() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    /** `name`: what the console calls the run, when not its action ("deploy" for a start after a save). */
    mutationFn: ({ id, action }: { id: string; action: StackAction; name?: string }) =>
      unwrap(
        hostApi(host).POST("/api/stacks/{stack_id}/actions/{action}", { params: { path: { stack_id: id, action } } }),
      ),
    onSuccess: (run, { id, name }) => {
      queryClient.setQueryData(stackKeys.runName(host, id), name ? { run: run.id, name } : null);
      queryClient.setQueryData(stackKeys.run(host, id), run);
    },
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

/** "Check now": ask the registries and take the fresh summary. */
export function useCheckUpdates() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: () => unwrap(hostApi(host).POST("/api/stacks/updates/check")),
    onSuccess: (summary) => {
      queryClient.setQueryData(stackKeys.updates(host), summary);
    },
  });
}

export function useCreateStack() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (body: NewStack) => unwrap(hostApi(host).POST("/api/stacks", { body })),
    onSuccess: (stack) => {
      queryClient.setQueryData(stackKeys.detail(host, stack.id), stack);
    },
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

/** A `docker run` command as a compose file: the central converts it, for any host. */
export function useConvertDockerRun() {
  return useMutation({
    mutationFn: (command: string) => unwrap(api.POST("/api/stacks/convert", { body: { command } })),
  });
}

export type StackFileKind = "compose" | "env";

/** Saves compose.yaml or .env; a 400 carries compose's validation error and the old file stays. */
export function useSaveStackFile(id: string, kind: StackFileKind) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (content: string): Promise<StackDetail> => {
      const params = { path: { stack_id: id } };
      const client = hostApi(host);
      return kind === "compose"
        ? unwrap(client.PUT("/api/stacks/{stack_id}/compose", { params, body: { content } }))
        : unwrap(client.PUT("/api/stacks/{stack_id}/env", { params, body: { content } }));
    },
    onSuccess: (stack) => {
      queryClient.setQueryData(stackKeys.detail(host, id), stack);
    },
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

export function useSaveSecrets(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (content: string) =>
      unwrap(
        hostApi(host).PUT("/api/stacks/{stack_id}/secrets", { params: { path: { stack_id: id } }, body: { content } }),
      ),
    onSuccess: (_data, content) => {
      queryClient.setQueryData(stackKeys.secrets(host, id), { content });
    },
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

export function useSetAutoUpdate(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (enabled: boolean) =>
      unwrap(
        hostApi(host).PUT("/api/stacks/{stack_id}/auto-update", {
          params: { path: { stack_id: id } },
          body: { enabled },
        }),
      ),
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

/** The stack's own update policy (operators and admins); the summary then shows it in force. */
export function useSetUpdatePolicy(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (policy: UpdatePolicy) =>
      unwrap(
        hostApi(host).PUT("/api/stacks/{stack_id}/update-policy", {
          params: { path: { stack_id: id } },
          body: policy,
        }),
      ),
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

/** The stack follows its host's default policy again. */
export function useInheritUpdatePolicy(id: string) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: () =>
      unwrap(hostApi(host).DELETE("/api/stacks/{stack_id}/update-policy", { params: { path: { stack_id: id } } })),
    onSettled: () => invalidateStacks(queryClient, host),
  });
}

/** The default update policy of `host` (every signed-in user may read it). */
export function defaultUpdatePolicyQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: stackKeys.defaultPolicy(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/stacks/update-policy")),
  });
}

/** Admin: the host's default policy; the stacks that follow it change with it. */
export function useSetDefaultUpdatePolicy() {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: (policy: UpdatePolicy) => unwrap(hostApi(host).PUT("/api/stacks/update-policy", { body: policy })),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: stackKeys.defaultPolicy(host) }),
        invalidateStacks(queryClient, host),
      ]),
  });
}

/** Admin: what deleting the stack does (containers, networks, volumes, the folder). */
export function stackDeletePlanQueryOptions(host: HostId, id: string) {
  return queryOptions({
    queryKey: stackKeys.deletePlan(host, id),
    queryFn: () =>
      unwrap(hostApi(host).GET("/api/stacks/{stack_id}/delete-plan", { params: { path: { stack_id: id } } })),
    staleTime: 0,
    gcTime: 0,
  });
}

/**
 * Admin: `compose down` (named volumes only when asked), then the folder is moved aside to
 * `.trash` in the stacks folder. `confirm` is the stack's name as the user typed it: the
 * server refuses anything but the exact id.
 */
/**
 * Delete a stack. `onDeleted` runs before the stack's queries are dropped: it leaves the
 * page (`DeleteStack`), since dropping the queries of the page shown unmounts what asked
 * for the deletion (a callback given to `mutate` would then never run) and makes the page
 * ask for the stack again, for a 404. Its detail and run are not asked for meanwhile.
 */
export function useDeleteStack({ onDeleted }: { onDeleted: (result: DeleteResult) => void }) {
  const queryClient = useQueryClient();
  const host = useHost();
  return useMutation({
    mutationFn: ({ id, confirm, removeVolumes }: { id: string; confirm: string; removeVolumes: boolean }) =>
      unwrap(
        hostApi(host).DELETE("/api/stacks/{stack_id}", {
          params: { path: { stack_id: id }, query: { confirm, remove_volumes: removeVolumes } },
        }),
      ),
    onMutate: ({ id }) =>
      Promise.all([
        queryClient.cancelQueries({ queryKey: stackKeys.detail(host, id) }),
        queryClient.cancelQueries({ queryKey: stackKeys.run(host, id) }),
      ]),
    onSuccess: (result, { id }) => {
      onDeleted(result);
      queryClient.removeQueries({ queryKey: stackKeys.detail(host, id) });
      queryClient.removeQueries({ queryKey: stackKeys.run(host, id) });
      queryClient.removeQueries({ queryKey: stackKeys.secrets(host, id) });
      queryClient.removeQueries({ queryKey: stackKeys.deletePlan(host, id) });
    },
    onSettled: () => invalidateStacks(queryClient, host),
  });
}
