import { describe, expect, it, vi } from "vitest";
import { createFakeFetch, installFakeFetch, json, noContent } from "../test/fakeFetch";
import { api, createApiClient, CSRF_HEADER, readCookie } from "./client";
import { ApiError, unwrap } from "./errors";

function clientWithFake() {
  const fake = createFakeFetch({
    "GET /api/auth/me": { id: 1, username: "alice", role: "admin" },
    "POST /api/auth/logout": () => noContent(),
    "PUT /api/auth/password": () => noContent(),
    "DELETE /api/auth/tokens/:id": () => noContent(),
    "GET /api/health": { status: "ok", version: "0.1.0", mode: "central" },
  });
  const client = createApiClient({ baseUrl: "http://stackyard.test", fetch: fake.fetch });
  return { fake, client };
}

describe("CSRF middleware", () => {
  it("adds the X-CSRF-Token header from the stackyard_csrf cookie on POST", async () => {
    document.cookie = "other=1";
    document.cookie = "stackyard_csrf=tok%2Fen-123";
    const { fake, client } = clientWithFake();

    await client.POST("/api/auth/logout");

    const [request] = fake.calls("POST", "/api/auth/logout");
    expect(request?.headers.get(CSRF_HEADER)).toBe("tok/en-123");
  });

  it("adds the header on PUT and DELETE too", async () => {
    document.cookie = "stackyard_csrf=abc";
    const { fake, client } = clientWithFake();

    await client.PUT("/api/auth/password", { body: { current_password: "a", new_password: "b" } });
    await client.DELETE("/api/auth/tokens/{token_id}", { params: { path: { token_id: 7 } } });

    expect(fake.requests.map((r) => [r.method, r.headers.get(CSRF_HEADER)])).toEqual([
      ["PUT", "abc"],
      ["DELETE", "abc"],
    ]);
  });

  it("does not add the header on GET", async () => {
    document.cookie = "stackyard_csrf=abc";
    const { fake, client } = clientWithFake();

    await client.GET("/api/auth/me");

    const [request] = fake.calls("GET", "/api/auth/me");
    expect(request).toBeDefined();
    expect(request?.headers.has(CSRF_HEADER)).toBe(false);
  });

  it("sends no header when there is no CSRF cookie (e.g. the sign-in request)", async () => {
    const { fake, client } = clientWithFake();

    await client.POST("/api/auth/logout");

    expect(fake.requests[0]?.headers.has(CSRF_HEADER)).toBe(false);
  });

  it("sends same-origin credentials", async () => {
    const { fake, client } = clientWithFake();

    await client.GET("/api/health");

    expect(fake.requests[0]?.credentials).toBe("same-origin");
  });
});

describe("the application client", () => {
  it("uses the global fetch at call time and the page origin", async () => {
    const fake = installFakeFetch({ "GET /api/health": { status: "ok", version: "9.9.9", mode: "central" } });

    const data = await unwrap(api.GET("/api/health"));

    expect(data.version).toBe("9.9.9");
    expect(fake.requests[0]?.url).toBe(`${window.location.origin}/api/health`);
  });
});

describe("readCookie", () => {
  it("finds a cookie among others", () => {
    expect(readCookie("b", "a=1; b=two; c=3")).toBe("two");
    expect(readCookie("d", "a=1; b=two")).toBeNull();
  });
});

describe("unwrap", () => {
  const response = (status: number, body: unknown, headers: Record<string, string> = {}) =>
    createApiClient({
      baseUrl: "http://stackyard.test",
      fetch: vi.fn(() =>
        Promise.resolve(typeof body === "string" ? new Response(body, { status, headers }) : json(body, { status, headers })),
      ),
    }).GET("/api/auth/me");

  it("turns an error response into an ApiError carrying the detail", async () => {
    const err = await unwrap(response(403, { detail: "Admins only" })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).message).toBe("Admins only");
    expect((err as ApiError).status).toBe(403);
  });

  it("reads FastAPI validation errors", async () => {
    const body = { detail: [{ loc: ["body", "username"], msg: "Field required", type: "missing" }] };
    await expect(unwrap(response(422, body))).rejects.toThrow("username: Field required");
  });

  it("reads Retry-After on 429", async () => {
    const err = await unwrap(response(429, { detail: "Too many attempts" }, { "Retry-After": "30" })).catch(
      (e: unknown) => e,
    );
    expect((err as ApiError).retryAfter).toBe(30);
  });

  it("falls back to the status when the body has no detail", async () => {
    await expect(unwrap(response(502, "<html>bad gateway</html>"))).rejects.toThrow("Request failed (502)");
  });

  it("reports a network failure readably", async () => {
    const client = createApiClient({
      baseUrl: "http://stackyard.test",
      fetch: vi.fn(() => Promise.reject(new TypeError("Failed to fetch"))),
    });
    await expect(unwrap(client.GET("/api/health"))).rejects.toThrow("Cannot reach the Stackyard server (Failed to fetch)");
  });
});
