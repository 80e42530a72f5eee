import { queryOptions } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";
import type { Fleet } from "../../api/types";

const systemKeys = {
  info: ["system", "info"] as const,
};

export const fleetKeys = {
  all: ["fleet"] as const,
};

/** How often the dashboard asks for the fleet again while it is shown. */
export const FLEET_REFETCH_MS = 15_000;

/** Version of Stackyard, Docker engine and Compose, and the stacks folder (of this host). */
export function systemInfoQueryOptions() {
  return queryOptions({
    queryKey: systemKeys.info,
    queryFn: () => unwrap(api.GET("/api/system/info")),
    staleTime: 30_000,
  });
}

/**
 * This host and every agent in one payload: what needs attention, headline figures, stacks
 * by state and a card per host (an agent that does not answer is shown offline, not an
 * error). Refreshed every 15 s; a failure answers 500 with the cause in `detail`.
 */
export function fleetQueryOptions() {
  return queryOptions({
    queryKey: fleetKeys.all,
    // The client reads the load's [1, 5, 15 min] tuple as a plain array: named as the schema's.
    queryFn: async (): Promise<Fleet> => (await unwrap(api.GET("/api/dashboard/fleet"))) as Fleet,
    refetchInterval: FLEET_REFETCH_MS,
    staleTime: 5_000,
  });
}
