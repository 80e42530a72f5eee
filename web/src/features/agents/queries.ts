import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { Agent, AgentSpec } from "../../api/types";
import { fleetKeys } from "../dashboard/queries";
import { isSettling } from "./settling";

export const agentKeys = {
  list: ["agents"] as const,
};

/** How often the list is read again while shown (the fleet dashboard updates last seen and errors). */
const AGENTS_REFETCH_MS = 30_000;

/** Every agent (any signed-in user); the token is never returned. */
export function agentsQueryOptions() {
  return queryOptions({
    queryKey: agentKeys.list,
    queryFn: () => unwrap(api.GET("/api/agents")),
    refetchInterval: AGENTS_REFETCH_MS,
  });
}

/** How often the Agents page asks while an agent that dials in is about to change (`isSettling`). */
export const AGENTS_SETTLING_REFETCH_MS = 2_000;
/** How long after its last change an agent that is not connected counts as about to change. */
const SETTLING_WINDOW_MS = 15 * 60_000;

/**
 * The list as the Agents page reads it: sooner while an agent that dials in is about to
 * change (its host enrolling, a key rotating, a tunnel coming back), so that the page
 * shows it within seconds rather than half a minute.
 */
export function agentsPageQueryOptions() {
  return queryOptions({
    ...agentsQueryOptions(),
    refetchInterval: (query) => {
      const agents: Agent[] = query.state.data ?? [];
      const now = Date.now();
      return agents.some((agent) => isSettling(agent, now, SETTLING_WINDOW_MS))
        ? AGENTS_SETTLING_REFETCH_MS
        : AGENTS_REFETCH_MS;
    },
  });
}

/** Every change shows on the fleet dashboard. */
function invalidateAgents(queryClient: QueryClient): Promise<unknown> {
  return Promise.all([
    queryClient.invalidateQueries({ queryKey: agentKeys.list }),
    queryClient.invalidateQueries({ queryKey: fleetKeys.all }),
  ]);
}

/**
 * Forgets what was read from agent `id` (its stacks, files, backups…): every host-local
 * query key holds its host second (`[feature, host, ...]`).
 */
export function removeAgentQueries(queryClient: QueryClient, id: number): void {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[1] === id });
}

/** For HTTPS, `fingerprint` is the one a test showed and the user confirmed (or a CA is given). */
export function useCreateAgent() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: AgentSpec) => unwrap(api.POST("/api/agents", { body })),
    onSettled: () => invalidateAgents(queryClient),
  });
}

/** `token: null` keeps the stored token; a new URL, fingerprint or CA pins the certificate anew. */
export function useUpdateAgent() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, spec }: { id: number; spec: AgentSpec }) =>
      unwrap(api.PUT("/api/agents/{agent_id}", { params: { path: { agent_id: id } }, body: spec })),
    // Another address or token may be another host: what was read from it is stale.
    onSuccess: (_agent, { id }) => removeAgentQueries(queryClient, id),
    onSettled: () => invalidateAgents(queryClient),
  });
}

/** Forgets the agent and its schedules; nothing changes on the agent's host. */
export function useDeleteAgent() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) => unwrap(api.DELETE("/api/agents/{agent_id}", { params: { path: { agent_id: id } } })),
    onSuccess: (_data, id) => removeAgentQueries(queryClient, id),
    onSettled: () => invalidateAgents(queryClient),
  });
}

/** Reaches an agent before it is saved: its version, capabilities and (HTTPS) certificate fingerprint. */
export function useTestUnsavedAgent() {
  return useMutation({
    mutationFn: (body: AgentSpec) => unwrap(api.POST("/api/agents/test", { body })),
  });
}

/** Tests a saved agent; what it found (version, capabilities or the error) is kept on its record. */
export function useTestAgent() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/agents/{agent_id}/test", { params: { path: { agent_id: id } } })),
    onSettled: () => invalidateAgents(queryClient),
  });
}

/**
 * An agent that dials in, waiting for its host to enrol: the answer holds the one-time
 * token (single use, 15 minutes), which nothing shows again.
 */
export function useCreateTunnelAgent() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (name: string) => unwrap(api.POST("/api/agents/tunnel", { body: { name } })),
    onSettled: () => invalidateAgents(queryClient),
  });
}

/** An agent that dials in makes a new key and dials again with it (`rotating` until it has). */
export function useRotateAgentKey() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/agents/{agent_id}/rotate-key", { params: { path: { agent_id: id } } })),
    onSettled: () => invalidateAgents(queryClient),
  });
}
