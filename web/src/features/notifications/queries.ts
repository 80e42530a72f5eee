import { queryOptions, useMutation, useQueryClient, type QueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { ChannelChange, NewChannel, NotificationRuleSpec, UnsavedChannelTest } from "../../api/types";

export const notificationKeys = {
  catalogue: ["notification-catalogue"] as const,
  channels: ["notification-channels"] as const,
  rules: ["notification-rules"] as const,
  /** Prefix of every channel's history. */
  allDeliveries: ["notification-deliveries"] as const,
  deliveries: (id: number) => ["notification-deliveries", id] as const,
};

/** How many of a channel's last deliveries its history shows. */
export const HISTORY_LIMIT = 50;
/** While some delivery waits (a retry, a digest gathering) the history is read again this often. */
const PENDING_REFETCH_MS = 5_000;

/** Every event and every kind of channel with its form's fields: fixed for a running server. */
export function catalogueQueryOptions() {
  return queryOptions({
    queryKey: notificationKeys.catalogue,
    queryFn: () => unwrap(api.GET("/api/notifications/catalogue")),
    staleTime: Infinity,
  });
}

/** Admin only. Secrets are never returned: `secrets_set` names those stored. */
export function channelsQueryOptions() {
  return queryOptions({
    queryKey: notificationKeys.channels,
    queryFn: () => unwrap(api.GET("/api/notifications/channels")),
  });
}

export function rulesQueryOptions() {
  return queryOptions({
    queryKey: notificationKeys.rules,
    queryFn: () => unwrap(api.GET("/api/notifications/rules")),
  });
}

/** A channel's last deliveries, newest first; read again while some are pending. */
export function deliveriesQueryOptions(id: number) {
  return queryOptions({
    queryKey: notificationKeys.deliveries(id),
    queryFn: () =>
      unwrap(
        api.GET("/api/notifications/channels/{channel_id}/deliveries", {
          params: { path: { channel_id: id }, query: { limit: HISTORY_LIMIT } },
        }),
      ),
    staleTime: 0,
    refetchInterval: (query) => (query.state.data?.some((d) => d.status === "pending") ? PENDING_REFETCH_MS : false),
  });
}

function invalidateChannels(queryClient: QueryClient): Promise<unknown> {
  return queryClient.invalidateQueries({ queryKey: notificationKeys.channels });
}

function invalidateRules(queryClient: QueryClient): Promise<unknown> {
  return queryClient.invalidateQueries({ queryKey: notificationKeys.rules });
}

export function useCreateChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NewChannel) => unwrap(api.POST("/api/notifications/channels", { body })),
    onSettled: () => invalidateChannels(queryClient),
  });
}

/** Settings are all sent; secrets left out are kept, an empty one is removed. */
export function useUpdateChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, change }: { id: number; change: ChannelChange }) =>
      unwrap(
        api.PATCH("/api/notifications/channels/{channel_id}", { params: { path: { channel_id: id } }, body: change }),
      ),
    onSettled: () => invalidateChannels(queryClient),
  });
}

/** Forgets the channel, its queue and its history. */
export function useDeleteChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/notifications/channels/{channel_id}", { params: { path: { channel_id: id } } })),
    onSuccess: (_data, id) => queryClient.removeQueries({ queryKey: notificationKeys.deliveries(id) }),
    // Rules may name it.
    onSettled: () => Promise.all([invalidateChannels(queryClient), invalidateRules(queryClient)]),
  });
}

/** Sends a test message through a saved channel (its last success or error is kept). */
export function useTestChannel() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.POST("/api/notifications/channels/{channel_id}/test", { params: { path: { channel_id: id } } })),
    onSettled: () => invalidateChannels(queryClient),
  });
}

/** What a dialog tests: the saved channel (`saved`, its id) or a form's values, saved or not. */
export type ChannelFormTest = { saved: number } | UnsavedChannelTest;

/** Sends a test message from a channel's dialog; a saved channel keeps its last success or error. */
export function useTestChannelForm() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (test: ChannelFormTest) =>
      "saved" in test
        ? unwrap(
            api.POST("/api/notifications/channels/{channel_id}/test", { params: { path: { channel_id: test.saved } } }),
          )
        : unwrap(api.POST("/api/notifications/channels/test", { body: test })),
    onSettled: (_data, _error, test) => ("saved" in test ? invalidateChannels(queryClient) : undefined),
  });
}

export function useCreateRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: NotificationRuleSpec) => unwrap(api.POST("/api/notifications/rules", { body })),
    onSettled: () => invalidateRules(queryClient),
  });
}

/** Replaces the whole rule (enabling and disabling too). */
export function useUpdateRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: ({ id, spec }: { id: number; spec: NotificationRuleSpec }) =>
      unwrap(api.PUT("/api/notifications/rules/{rule_id}", { params: { path: { rule_id: id } }, body: spec })),
    onSettled: () => invalidateRules(queryClient),
  });
}

export function useDeleteRule() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: number) =>
      unwrap(api.DELETE("/api/notifications/rules/{rule_id}", { params: { path: { rule_id: id } } })),
    onSettled: () => invalidateRules(queryClient),
  });
}
