import { queryOptions } from "@tanstack/react-query";
import { api } from "../../api/client";
import { unwrap } from "../../api/errors";

const systemKeys = {
  info: ["system", "info"] as const,
};

/** Version of Stackyard, Docker engine and Compose, and the stacks folder. */
export function systemInfoQueryOptions() {
  return queryOptions({
    queryKey: systemKeys.info,
    queryFn: () => unwrap(api.GET("/api/system/info")),
    staleTime: 30_000,
  });
}
