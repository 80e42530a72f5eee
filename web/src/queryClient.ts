import { QueryCache, QueryClient, hashKey } from "@tanstack/react-query";
import { ApiError, isUnauthorized } from "./api/errors";
import { authKeys } from "./features/auth/queries";

/** Client errors (4xx) are answers, not glitches: never retry them. */
function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError && error.status < 500) return false;
  return failureCount < 2;
}

export function createQueryClient(options: { retry?: boolean } = {}): QueryClient {
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      onError(error, query) {
        // A session that expired while browsing: re-check who we are; the auth
        // guard then sends the user to the sign-in page.
        if (isUnauthorized(error) && query.queryHash !== hashKey(authKeys.me)) {
          void client.invalidateQueries({ queryKey: authKeys.me });
        }
      },
    }),
    defaultOptions: {
      queries: {
        retry: options.retry === false ? false : shouldRetry,
        refetchOnWindowFocus: false,
        staleTime: 10_000,
      },
      mutations: { retry: false },
    },
  });
  return client;
}
