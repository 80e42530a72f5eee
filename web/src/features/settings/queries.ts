import { keepPreviousData, queryOptions, useMutation, useQueryClient, type QueryKey } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { IdentityProviderChange, NewRegistry, NewToken, NewUser, UserChange } from "../../api/types";
import { authKeys } from "../auth/queries";

export const settingsKeys = {
  tokens: ["auth", "tokens"] as const,
  /** Prefix of the user list and of every user's tokens. */
  users: ["users"] as const,
  userTokens: (username: string) => ["users", username, "tokens"] as const,
  audit: ["audit"] as const,
  registries: ["registries"] as const,
  identityProvider: ["identity-provider"] as const,
  auditPage: (limit: number, offset: number) => ["audit", { limit, offset }] as const,
};

export const AUDIT_PAGE_SIZE = 50;

export function tokensQueryOptions() {
  return queryOptions({
    queryKey: settingsKeys.tokens,
    queryFn: () => unwrap(api.GET("/api/auth/tokens")),
  });
}

export function usersQueryOptions() {
  return queryOptions({
    queryKey: settingsKeys.users,
    queryFn: () => unwrap(api.GET("/api/users")),
  });
}

/** Admin: another user's API tokens. */
export function userTokensQueryOptions(username: string) {
  return queryOptions({
    queryKey: settingsKeys.userTokens(username),
    queryFn: () => unwrap(api.GET("/api/users/{username}/tokens", { params: { path: { username } } })),
  });
}

export function auditQueryOptions(limit: number = AUDIT_PAGE_SIZE, offset: number = 0) {
  return queryOptions({
    queryKey: settingsKeys.auditPage(limit, offset),
    queryFn: () => unwrap(api.GET("/api/audit", { params: { query: { limit, offset } } })),
    placeholderData: keepPreviousData,
  });
}

/** Admin: sign-in through an identity provider (the client secret is never returned). */
export function identityProviderQueryOptions() {
  return queryOptions({
    queryKey: settingsKeys.identityProvider,
    queryFn: () => unwrap(api.GET("/api/identity-provider")),
  });
}

/** Admin: registry credentials for update checks (passwords are never returned). */
export function registriesQueryOptions() {
  return queryOptions({
    queryKey: settingsKeys.registries,
    queryFn: () => unwrap(api.GET("/api/registries")),
  });
}

// Every change below is audited by the server: the query client re-reads the audit log
// after every mutation (queryClient.ts), so none of them names it.

/** Marks the queries under `keys` stale (those on screen are read again); resolves when they are. */
function useInvalidate(...keys: QueryKey[]) {
  const queryClient = useQueryClient();
  return () => Promise.all(keys.map((queryKey) => queryClient.invalidateQueries({ queryKey })));
}

/** Ends your other sign-ins and revokes all your API tokens (this sign-in stays). */
export function useChangePassword() {
  // The user's own record too: a one-time password's nudge goes.
  const invalidate = useInvalidate(authKeys.me, settingsKeys.tokens, settingsKeys.users);
  return useMutation({
    mutationFn: (body: { current_password: string; new_password: string }) =>
      unwrap(api.PUT("/api/auth/password", { body })),
    onSuccess: invalidate,
  });
}

/** Needs the user's current password again; a wrong one is a 403 with the server's detail. */
export function useCreateToken() {
  const invalidate = useInvalidate(settingsKeys.tokens);
  return useMutation({
    mutationFn: (body: NewToken) => unwrap(api.POST("/api/auth/tokens", { body })),
    onSuccess: invalidate,
  });
}

export function useDeleteToken() {
  const invalidate = useInvalidate(settingsKeys.tokens);
  return useMutation({
    mutationFn: (id: number) => unwrap(api.DELETE("/api/auth/tokens/{token_id}", { params: { path: { token_id: id } } })),
    onSettled: invalidate,
  });
}

export function useCreateUser() {
  const invalidate = useInvalidate(settingsKeys.users);
  return useMutation({
    mutationFn: (body: NewUser) => unwrap(api.POST("/api/users", { body })),
    onSuccess: invalidate,
  });
}

export function useDeleteUser() {
  const invalidate = useInvalidate(settingsKeys.users);
  return useMutation({
    mutationFn: (username: string) => unwrap(api.DELETE("/api/users/{username}", { params: { path: { username } } })),
    onSettled: invalidate,
  });
}

/** Admin: a new role or (dis)abling; either ends the user's sessions and revokes their tokens. */
export function useUpdateUser() {
  const invalidate = useInvalidate(settingsKeys.users);
  return useMutation({
    mutationFn: ({ username, change }: { username: string; change: UserChange }) =>
      unwrap(api.PATCH("/api/users/{username}", { params: { path: { username } }, body: change })),
    onSettled: invalidate,
  });
}

/** Admin: revoke one of another user's API tokens. */
export function useRevokeUserToken() {
  const invalidate = useInvalidate(settingsKeys.users);
  return useMutation({
    mutationFn: ({ username, tokenId }: { username: string; tokenId: number }) =>
      unwrap(
        api.DELETE("/api/users/{username}/tokens/{token_id}", { params: { path: { username, token_id: tokenId } } }),
      ),
    onSettled: invalidate,
  });
}

/** Admin: set another user's password; their sessions end and their API tokens are revoked. */
export function useSetUserPassword() {
  const invalidate = useInvalidate(settingsKeys.users);
  return useMutation({
    mutationFn: ({ username, password }: { username: string; password: string }) =>
      unwrap(api.PUT("/api/users/{username}/password", { params: { path: { username } }, body: { password } })),
    onSuccess: invalidate,
  });
}

export function useSetRegistry() {
  const invalidate = useInvalidate(settingsKeys.registries);
  return useMutation({
    mutationFn: (body: NewRegistry) => unwrap(api.PUT("/api/registries", { body })),
    onSettled: invalidate,
  });
}

export function useDeleteRegistry() {
  const invalidate = useInvalidate(settingsKeys.registries);
  return useMutation({
    mutationFn: (registry: string) =>
      unwrap(api.DELETE("/api/registries/{registry}", { params: { path: { registry } } })),
    onSettled: invalidate,
  });
}

/** Admin: turns a user's two-factor sign-in off; their sessions end and their tokens are revoked. */
export function useResetTwoFactor() {
  const invalidate = useInvalidate(settingsKeys.users);
  return useMutation({
    mutationFn: (username: string) =>
      unwrap(api.POST("/api/users/{username}/two-factor/reset", { params: { path: { username } } })),
    onSettled: invalidate,
  });
}

export function useSetIdentityProvider() {
  const invalidate = useInvalidate(settingsKeys.identityProvider, authKeys.signInOptions);
  return useMutation({
    mutationFn: (body: IdentityProviderChange) => unwrap(api.PUT("/api/identity-provider", { body })),
    onSuccess: invalidate,
  });
}

/** Reads the provider's discovery document as a save would; nothing is saved. */
export function useTestIdentityProvider() {
  return useMutation({
    mutationFn: (body: IdentityProviderChange) => unwrap(api.POST("/api/identity-provider/test", { body })),
  });
}

/** Your own two-factor sign-in: a new secret to scan (asks for the password again). */
export function useBeginTwoFactor() {
  return useMutation({
    mutationFn: (password: string) => unwrap(api.POST("/api/auth/two-factor/setup", { body: { password } })),
  });
}

/**
 * Turns two-factor on with a code from the app; resolves with the recovery codes (shown
 * once). Not waiting for the user's record to be read again: the codes are shown at once.
 */
export function useConfirmTwoFactor() {
  const invalidate = useInvalidate(authKeys.me);
  return useMutation({
    mutationFn: (code: string) => unwrap(api.POST("/api/auth/two-factor/confirm", { body: { code } })),
    onSuccess: () => void invalidate(),
  });
}

export function useTurnOffTwoFactor() {
  const invalidate = useInvalidate(authKeys.me);
  return useMutation({
    mutationFn: (password: string) => unwrap(api.POST("/api/auth/two-factor/off", { body: { password } })),
    onSuccess: invalidate,
  });
}
