import { queryOptions } from "@tanstack/react-query";
import { unwrap } from "../../api/errors";
import { hostApi, type HostId } from "../../api/hosts";
import { hostKey } from "../hosts/host";

export const containerKeys = {
  usage: (host: HostId) => ["host-usage", hostKey(host)] as const,
};

/** How often resource use is read while a page shows it (the engine samples every second). */
export const USAGE_REFETCH_MS = 2_000;

/** Every running container's use on `host`: one call, whatever page asks. */
export function usageQueryOptions(host: HostId) {
  return queryOptions({
    queryKey: containerKeys.usage(host),
    queryFn: () => unwrap(hostApi(host).GET("/api/usage")),
    refetchInterval: USAGE_REFETCH_MS,
  });
}
