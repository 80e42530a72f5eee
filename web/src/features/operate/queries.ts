import { queryOptions } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";

export const operateKeys = {
  usage: ["host-usage"] as const,
};

/** How often resource use is read while a page shows it (the engine samples every second). */
export const USAGE_REFETCH_MS = 2_000;

/** Every running container's use on this host: one call, whatever page asks. */
export function usageQueryOptions() {
  return queryOptions({
    queryKey: operateKeys.usage,
    queryFn: () => unwrap(api.GET("/api/usage")),
    refetchInterval: USAGE_REFETCH_MS,
  });
}
