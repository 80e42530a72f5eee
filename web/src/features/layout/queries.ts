import { queryOptions } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";

const healthKeys = {
  all: ["health"] as const,
};

/** Unauthenticated health probe; carries the running version. */
export function healthQueryOptions() {
  return queryOptions({
    queryKey: healthKeys.all,
    queryFn: () => unwrap(api.GET("/api/health")),
    staleTime: 5 * 60_000,
  });
}
