import { describe, expect, it } from "vitest";
import { createFakeFetch, installFakeFetch, json, noContent } from "../test/fakeFetch";
import { CSRF_HEADER } from "./client";
import { unwrap } from "./errors";
import { createHostClient, hostApi, hostOfPath, hostPath, isHostLocal } from "./hosts";

describe("hostPath", () => {
  it("leaves every path alone on this host", () => {
    expect(hostPath("/api/stacks", null)).toBe("/api/stacks");
    expect(hostPath("/api/files/download?path=a", null)).toBe("/api/files/download?path=a");
  });

  it.each([
    ["/api/stacks", "/api/agents/3/stacks"],
    ["/api/stacks/updates", "/api/agents/3/stacks/updates"],
    ["/api/stacks/web/run/events", "/api/agents/3/stacks/web/run/events"],
    ["/api/stacks/my%20app/logs?service=db&tail=10", "/api/agents/3/stacks/my%20app/logs?service=db&tail=10"],
    ["/api/stacks/web/containers/web-app-1/shell", "/api/agents/3/stacks/web/containers/web-app-1/shell"],
    ["/api/usage", "/api/agents/3/usage"],
    ["/api/files?path=web&hidden=false", "/api/agents/3/files?path=web&hidden=false"],
    ["/api/files/upload", "/api/agents/3/files/upload"],
    ["/api/backups", "/api/agents/3/backups"],
    ["/api/backups/web-2025.tar/download", "/api/agents/3/backups/web-2025.tar/download"],
    ["/api/system/info", "/api/agents/3/system/info"],
    ["/api/system/update?fresh=true", "/api/agents/3/system/update?fresh=true"],
    // Served by the central itself for an agent's archive (a transfer through it).
    ["/api/backups/web-2025.tar/push", "/api/agents/3/backups/web-2025.tar/push"],
    ["/api/fleet/host", "/api/agents/3/fleet/host"],
    ["/api/disk", "/api/agents/3/disk"],
    ["/api/disk/volumes/web_data?confirm=web_data", "/api/agents/3/disk/volumes/web_data?confirm=web_data"],
    ["/api/disk/prune/preview", "/api/agents/3/disk/prune/preview"],
    ["/api/streams/0b6a-name/end", "/api/agents/3/streams/0b6a-name/end"],
    ["/api/git/repositories", "/api/agents/3/git/repositories"],
    ["/api/git/stacks/web/preview?commit=abc", "/api/agents/3/git/stacks/web/preview?commit=abc"],
  ])("sends the host-local %s to the agent's proxy", (path, proxied) => {
    expect(hostPath(path, 3)).toBe(proxied);
  });

  it.each([
    "/api/auth/me",
    "/api/health",
    "/api/agents",
    "/api/dashboard/fleet",
    "/api/destinations",
    "/api/schedules",
    "/api/stacksfoo",
    "/api/diskette",
    "/api/system/updates",
    // The git hosts' webhooks: the central's own route, for every host's repositories.
    "/api/git/hooks/r1",
    "/api/git/hooks/agents/3/r1",
    "/api/gitx",
  ])("keeps the central's own %s on the central", (path) => {
    expect(isHostLocal(path)).toBe(false);
    expect(hostPath(path, 3)).toBe(path);
  });
});

describe("hostOfPath", () => {
  it("reads the host back from a path made for it (an agent's own route, or this host's)", () => {
    expect(hostOfPath("/api/agents/3/stacks/web/logs?tail=10")).toBe(3);
    expect(hostOfPath("/api/stacks/web/logs")).toBeNull();
    // A transfer of an agent's archives is the central's run, served by the central.
    expect(hostOfPath("/api/agents/3/transfers/web/run/events")).toBeNull();
  });
});

describe("a host's client", () => {
  function agentClient() {
    const fake = createFakeFetch({
      "GET /api/agents/:id/stacks": [],
      "GET /api/agents/:id/files": { path: "", entries: [] },
      "POST /api/agents/:id/stacks/:stack/actions/:action": () => json({ started: true }, { status: 202 }),
      "PUT /api/agents/:id/files/content": async (request) => json({ got: (await request.json()) as unknown }),
      "GET /api/auth/me": { id: 1, username: "alice", role: "admin" },
      "DELETE /api/agents/:id/files": () => noContent(),
    });
    return { fake, client: createHostClient(3, { baseUrl: "http://stackyard.test", fetch: fake.fetch }) };
  }

  it("rewrites the typed paths to the agent's, query included", async () => {
    const { fake, client } = agentClient();

    await unwrap(client.GET("/api/stacks"));
    await unwrap(client.GET("/api/files", { params: { query: { path: "web/conf", hidden: true } } }));

    expect(fake.requests.map((r) => r.url)).toEqual([
      "http://stackyard.test/api/agents/3/stacks",
      "http://stackyard.test/api/agents/3/files?path=web%2Fconf&hidden=true",
    ]);
  });

  it("keeps the method, the JSON body and the CSRF header", async () => {
    document.cookie = "stackyard_csrf=c5rf";
    const { fake, client } = agentClient();

    const saved = await unwrap(
      client.PUT("/api/files/content", { body: { path: "a.txt", content: "hello", version: null } }),
    );
    await unwrap(client.DELETE("/api/files", { params: { query: { path: "old", recursive: true } } }));

    expect(saved).toEqual({ got: { path: "a.txt", content: "hello", version: null } });
    const [put, remove] = fake.requests;
    expect(put?.method).toBe("PUT");
    expect(put?.headers.get(CSRF_HEADER)).toBe("c5rf");
    expect(put?.headers.get("Content-Type")).toBe("application/json");
    expect(remove?.method).toBe("DELETE");
    expect(new URL(remove?.url ?? "").pathname).toBe("/api/agents/3/files");
  });

  it("sends a POST without a body as one", async () => {
    const { fake, client } = agentClient();

    await client.POST("/api/stacks/{stack_id}/actions/{action}", { params: { path: { stack_id: "web", action: "start" } } });

    expect(fake.calls("POST", "/api/agents/3/stacks/web/actions/start")).toHaveLength(1);
  });

  it("leaves the central's own routes where they are", async () => {
    const { fake, client } = agentClient();

    await unwrap(client.GET("/api/auth/me"));

    expect(fake.calls("GET", "/api/auth/me")).toHaveLength(1);
  });

  it("is the application's client for this host, and one client per agent", async () => {
    const fake = installFakeFetch({ "GET /api/stacks": [], "GET /api/agents/:id/stacks": [] });

    expect(hostApi(7)).toBe(hostApi(7));
    await unwrap(hostApi(null).GET("/api/stacks"));
    await unwrap(hostApi(7).GET("/api/stacks"));

    expect(fake.requests.map((r) => new URL(r.url).pathname)).toEqual(["/api/stacks", "/api/agents/7/stacks"]);
  });
});
