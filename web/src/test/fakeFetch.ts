import { vi, type Mock } from "vitest";

type FetchFn = (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;

/** Answers one request; `params` are the path's `:name` segments. */
export type Handler = (request: Request, params: Record<string, string>) => Response | Promise<Response>;

/** Routes keyed by "METHOD /path" (":name" matches one segment); a non-function value is sent as JSON 200. */
export type Routes = Record<string, Handler | object | string | number | boolean | null>;

export function json(body: unknown, init: { status?: number; headers?: Record<string, string> } = {}): Response {
  return new Response(JSON.stringify(body), {
    status: init.status ?? 200,
    headers: { "Content-Type": "application/json", ...init.headers },
  });
}

export function noContent(): Response {
  return new Response(null, { status: 204 });
}

function match(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split("/");
  const got = path.split("/");
  if (want.length !== got.length) return null;
  const params: Record<string, string> = {};
  for (let i = 0; i < want.length; i++) {
    const w = want[i] ?? "";
    const g = got[i] ?? "";
    if (w.startsWith(":")) params[w.slice(1)] = decodeURIComponent(g);
    else if (w !== g) return null;
  }
  return params;
}

export interface FakeFetch {
  fetch: Mock<FetchFn>;
  /** Every request received, in order (clones, so bodies can still be read). */
  requests: Request[];
  /** Requests to "METHOD /path" (exact pathname, query ignored). */
  calls: (method: string, path: string) => Request[];
}

/** A fake `fetch` at the network boundary; unknown routes answer 404 with a detail. */
export function createFakeFetch(routes: Routes): FakeFetch {
  const requests: Request[] = [];
  const fetch = vi.fn<FetchFn>(async (input, init) => {
    const request = input instanceof Request ? input : new Request(input, init);
    requests.push(request.clone());
    const url = new URL(request.url);
    for (const [key, route] of Object.entries(routes)) {
      const [method, pattern] = key.split(" ");
      if (method !== request.method || !pattern) continue;
      const params = match(pattern, url.pathname);
      if (!params) continue;
      return typeof route === "function" ? (route as Handler)(request, params) : json(route);
    }
    return json({ detail: `No fake route for ${request.method} ${url.pathname}` }, { status: 404 });
  });
  return {
    fetch,
    requests,
    calls: (method, path) => requests.filter((r) => r.method === method && new URL(r.url).pathname === path),
  };
}

/** Installs a fake as the global fetch for the current test. */
export function installFakeFetch(routes: Routes): FakeFetch {
  const fake = createFakeFetch(routes);
  vi.stubGlobal("fetch", fake.fetch);
  return fake;
}
