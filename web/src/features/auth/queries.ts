import { queryOptions, useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { User } from "../../api/types";

export const authKeys = {
  me: ["auth", "me"] as const,
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

export interface Credentials {
  username: string;
  password: string;
}

export function useLogin() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Credentials) => unwrap(api.POST("/api/auth/login", { body })),
    onSuccess: () => {
      // Forget whatever an earlier session cached, then read who we are now (and what we
      // may do) before the page that follows is shown.
      queryClient.clear();
      return queryClient.fetchQuery(meQueryOptions());
    },
  });
}

export function useLogout() {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: () => unwrap(api.POST("/api/auth/logout")),
    onSettled: () => {
      queryClient.clear();
    },
  });
}
