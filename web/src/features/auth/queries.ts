import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "react-router";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { User } from "../../api/types";
import { away } from "./leave";

export const authKeys = {
  me: ["auth", "me"] as const,
  signInOptions: ["auth", "sign-in-options"] as const,
};

/** The signed-in user; fails with a 401 ApiError when nobody is signed in. */
export function meQueryOptions() {
  return queryOptions({
    queryKey: authKeys.me,
    queryFn: () => unwrap(api.GET("/api/auth/me")),
    staleTime: 60_000,
  });
}

export function useCurrentUser(): User | undefined {
  return useQuery(meQueryOptions()).data;
}

/** What the sign-in page offers: an identity provider, and who may use a password. */
export function signInOptionsQueryOptions() {
  return queryOptions({
    queryKey: authKeys.signInOptions,
    queryFn: () => unwrap(api.GET("/api/auth/sign-in-options")),
    staleTime: 60_000,
  });
}

export interface Credentials {
  username: string;
  password: string;
  /** The authenticator app's code (or a recovery code), once the server asked for it. */
  code?: string;
}

/** Resolves with `code_needed: true` (nobody signed in yet) when the account has two-factor on. */
export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Credentials) => unwrap(api.POST("/api/auth/login", { body })),
    onSuccess: async (answer) => {
      if (!answer.user) return;
      // Forget whatever an earlier session cached, then read who we are now (and what we
      // may do) before the page that follows is shown.
      queryClient.clear();
      await queryClient.fetchQuery(meQueryOptions());
    },
  });
}

/**
 * Signs out, then goes to the sign-in page, or first to the identity provider's sign-out
 * when the sign-in began there (it sends the browser back). In the hook's own callbacks:
 * those of `mutate` are skipped once the cleared cache has unmounted the caller.
 */
export function useLogout() {
  const queryClient = useQueryClient();
  const navigate = useNavigate();
  const toSignIn = () => void navigate("/login", { replace: true });
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/auth/logout")),
    onSuccess: (answer) => (answer.provider_logout_url ? away.leaveFor(answer.provider_logout_url) : toSignIn()),
    onError: toSignIn,
    onSettled: () => {
      queryClient.clear();
    },
  });
}
