import { useSearchParams } from "react-router";
import type { HostId } from "../../api/hosts";

/** The query parameter that names the host a page shows: `?host=3` is agent 3; none is this host. */
export const HOST_PARAM = "host";

/** The host named by a `host` parameter's value: an agent's id, or null (this host) for anything else. */
export function parseHost(value: string | null | undefined): HostId {
  if (!value || !/^[1-9][0-9]{0,15}$/.test(value)) return null;
  return Number(value);
}

/**
 * The host of the current page, from the address (`?host=3`), so that links and reloads
 * keep it. Pages without the parameter (and pages that never show another host) are on
 * this host.
 */
export function useHost(): HostId {
  const [params] = useSearchParams();
  return parseHost(params.get(HOST_PARAM));
}

/** `to` (a path, with or without a query) on `host`: `?host=N` added for an agent, nothing for this host. */
export function withHost(to: string, host: HostId): string {
  if (host === null) return to;
  const hash = to.indexOf("#");
  const [path, fragment] = hash === -1 ? [to, ""] : [to.slice(0, hash), to.slice(hash)];
  return `${path}${path.includes("?") ? "&" : "?"}${HOST_PARAM}=${host}${fragment}`;
}

/**
 * The host's part of a query key: every host-local query key is `[feature, hostKey(host), ...]`,
 * so that switching hosts never mixes caches, a feature's prefix (`["stacks"]`) still reaches
 * every host, and an agent's queries are found by their second element.
 */
export function hostKey(host: HostId): "local" | number {
  return host ?? "local";
}
