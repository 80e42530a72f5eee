import { MutationCache, QueryCache, QueryClient, hashKey } from "@tanstack/react-query";
import { ApiError, isUnauthorized } from "./api/errors";
import { authKeys } from "./features/auth/queries";
import { settingsKeys } from "./features/settings/queries";

/** A refusal (403) re-reads the user's record at most this often (a polled page may repeat it). */
const RECHECK_AFTER_FORBIDDEN_MS = 10_000;

/**
 * An answer with a status (a 4xx, or a 5xx with the server's reason: an offline agent, an
 * engine that cannot be reached) is shown at once: asking again within seconds only made
 * the user wait for the same words, and polled queries ask again anyway. A request that
 * got no answer at all is tried once more.
 */
function shouldRetry(failureCount: number, error: unknown): boolean {
  if (error instanceof ApiError) return false;
  return failureCount < 1;
}

export function createQueryClient(options: { retry?: boolean } = {}): QueryClient {
  const client: QueryClient = new QueryClient({
    queryCache: new QueryCache({
      onError(error, query) {
        // A session that expired while browsing: re-check who we are; the auth
        // guard then sends the user to the sign-in page.
        if (query.queryHash === hashKey(authKeys.me)) return;
        if (isUnauthorized(error)) {
          void client.invalidateQueries({ queryKey: authKeys.me });
          return;
        }
        // A refusal: perhaps the user's role changed, or an admin now requires two-factor
        // sign-in (the server then refuses all but the account's set-up): the layout follows
        // the record read again, rather than showing pages of refusals.
        const me = client.getQueryState(authKeys.me);
        if (
          error instanceof ApiError &&
          error.status === 403 &&
          me !== undefined &&
          Date.now() - me.dataUpdatedAt > RECHECK_AFTER_FORBIDDEN_MS
        ) {
          void client.invalidateQueries({ queryKey: authKeys.me });
        }
      },
    }),
    mutationCache: new MutationCache({
      // The server audits what users change, and a refused change too (a failure, with the
      // server's reason), so every mutation that ended, well or not, re-reads the audit log.
      // Not waited for: the log is not what the mutation's caller waits on (a page shows
      // what it saved, or recovery codes, at once), and it is read only while on screen.
      onSettled() {
        void client.invalidateQueries({ queryKey: settingsKeys.audit });
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
