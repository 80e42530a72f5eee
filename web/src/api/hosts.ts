import type { Middleware } from "openapi-fetch";
import { api, createApiClient, type ApiClient, type ApiClientOptions } from "./client";

/**
 * The host a page's requests go to: `null` is this host (the central itself), a number
 * the id of an agent. The central serves every host-local route of an agent at
 * `/api/agents/{id}/...` with the same methods, bodies, answers and roles as its own
 * `/api/...`, so the UI reaches any host with the same typed paths.
 */
export type HostId = number | null;

/** This host (the central). */
export const LOCAL_HOST: HostId = null;

/**
 * What every host serves: stacks (runs, logs, shell), the containers outside them, resource use, files, backups, its
 * disk (images, volumes, networks, prunes), system info, its own version check and self-update, fleet report, the end
 * of a stream it serves, its git repositories and the stacks made of them. (Pushing an agent's archive, `/api/agents/{id}/backups/{name}/push`, is
 * served by the central itself, which holds the destinations: the same address all the same. The git hosts' webhooks,
 * `/api/git/hooks/...`, are the central's, for every host.)
 */
const HOST_LOCAL =
  /^\/api\/(?:stacks|containers|usage|files|backups|disk|streams|system\/(?:info|update)|fleet\/host|git(?!\/hooks(?:\/|$)))(?:\/|$)/;

/** Whether `path` (a pathname, no query) is a route every host serves, reached for an agent at `/api/agents/{id}/…`. */
export function isHostLocal(path: string): boolean {
  return HOST_LOCAL.test(path);
}

/**
 * `path` (a pathname, optionally with its query) for `host`: unchanged for this host and
 * for central-only routes; `/api/X` becomes `/api/agents/{id}/X` for an agent. The one
 * place the proxy's prefix is written: the typed clients, event streams, downloads,
 * uploads and the shell's WebSocket all go through it.
 */
export function hostPath(path: string, host: HostId): string {
  if (host === null) return path;
  const cut = path.search(/[?#]/);
  const pathname = cut === -1 ? path : path.slice(0, cut);
  if (!isHostLocal(pathname)) return path;
  return `/api/agents/${host}/${path.slice("/api/".length)}`;
}

/** The host whose route `path` (made by `hostPath`) is: the agent's id, or null for this host. */
export function hostOfPath(path: string): HostId {
  const proxied = /^\/api\/agents\/(\d+)(\/[^?#]*)/.exec(path);
  if (!proxied?.[1] || !proxied[2] || !isHostLocal(`/api${proxied[2]}`)) return null;
  return Number(proxied[1]);
}

const NO_BODY = new Set(["GET", "HEAD"]);

/**
 * Sends the client's host-local requests to agent `host` (through the central's proxy).
 * The request is made anew at the new address; its body (JSON, small: uploads do not use
 * the typed client) is read first, since a streamed body cannot be handed on as is.
 */
export function hostMiddleware(host: number): Middleware {
  return {
    async onRequest({ request }) {
      const url = new URL(request.url);
      const path = hostPath(url.pathname, host);
      if (path === url.pathname) return undefined;
      url.pathname = path;
      const method = request.method.toUpperCase();
      const body = NO_BODY.has(method) ? undefined : await request.blob();
      return new Request(url, {
        method,
        headers: request.headers,
        body: body && body.size > 0 ? body : undefined,
        credentials: request.credentials,
        redirect: request.redirect,
        signal: request.signal,
      });
    },
  };
}

/** A typed client whose host-local requests go to agent `host`. */
export function createHostClient(host: number, options: ApiClientOptions = {}): ApiClient {
  const client = createApiClient(options);
  client.use(hostMiddleware(host));
  return client;
}

const agentClients = new Map<number, ApiClient>();

/** The client of `host`: the application's for this host, one made once per agent. */
export function hostApi(host: HostId): ApiClient {
  if (host === null) return api;
  let client = agentClients.get(host);
  if (!client) {
    client = createHostClient(host);
    agentClients.set(host, client);
  }
  return client;
}
