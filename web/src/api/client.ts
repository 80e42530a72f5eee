import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "./schema";

/** Cookie set by the backend at sign-in; readable by JS on purpose. */
const CSRF_COOKIE = "stackyard_csrf";
/** Header every cookie-authenticated unsafe request must carry. */
export const CSRF_HEADER = "X-CSRF-Token";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/** Returns the value of cookie `name`, or null when it is not set. */
export function readCookie(name: string, cookies: string = globalThis.document?.cookie ?? ""): string | null {
  for (const part of cookies.split(";")) {
    const eq = part.indexOf("=");
    if (eq === -1) continue;
    if (part.slice(0, eq).trim() === name) {
      const raw = part.slice(eq + 1).trim();
      try {
        return decodeURIComponent(raw);
      } catch {
        return raw;
      }
    }
  }
  return null;
}

/** The CSRF token to send on unsafe requests (the `stackyard_csrf` cookie), or null. */
export function csrfToken(): string | null {
  return readCookie(CSRF_COOKIE);
}

/**
 * Adds the CSRF header to the client's requests: every request whose method is not
 * GET/HEAD/OPTIONS carries `X-CSRF-Token` with the value of the `stackyard_csrf` cookie.
 * Requests made outside the client (uploads with XMLHttpRequest) use `csrfToken()` too.
 */
const csrfMiddleware: Middleware = {
  onRequest({ request }) {
    if (SAFE_METHODS.has(request.method.toUpperCase())) return undefined;
    const token = csrfToken();
    if (token) request.headers.set(CSRF_HEADER, token);
    return request;
  },
};

export interface ApiClientOptions {
  /** Defaults to the page's origin (the UI is served by the backend at "/"). */
  baseUrl?: string;
  /** Defaults to the global fetch, looked up at call time. */
  fetch?: (input: Request, init?: RequestInit) => Promise<Response>;
}

/** The page's origin, where the backend serves the API; "" outside a browser. */
export function pageOrigin(): string {
  return typeof window !== "undefined" && window.location ? window.location.origin : "";
}

export function createApiClient(options: ApiClientOptions = {}) {
  const doFetch = options.fetch ?? ((input: Request, init?: RequestInit) => globalThis.fetch(input, init));
  const client = createClient<paths>({
    baseUrl: options.baseUrl ?? pageOrigin(),
    credentials: "same-origin",
    fetch: doFetch,
  });
  client.use(csrfMiddleware);
  return client;
}

export type ApiClient = ReturnType<typeof createApiClient>;

/** The application's client. */
export const api: ApiClient = createApiClient();
