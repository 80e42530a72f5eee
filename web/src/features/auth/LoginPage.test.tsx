import { screen } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { adminUser, health, systemInfo, unauthorized } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { away } from "./leave";

/** Watches where the app leaves for (each test: the files share their modules). */
let leaveFor: MockInstance<(url: string) => void>;
beforeEach(() => {
  leaveFor = vi.spyOn(away, "leaveFor").mockImplementation(() => undefined);
});
afterEach(() => leaveFor.mockRestore());

describe("sign-in", () => {
  it("redirects an anonymous visitor to /login", async () => {
    installFakeFetch({ "GET /api/auth/me": unauthorized, "GET /api/health": health });

    renderApp("/stacks");

    expect(await screen.findByRole("button", { name: "Sign in" })).toBeInTheDocument();
    expect(screen.getByTestId("location")).toHaveTextContent("/login");
  });

  it("shows the server's error detail when the credentials are wrong", async () => {
    const fake = installFakeFetch({
      "GET /api/auth/me": unauthorized,
      "POST /api/auth/login": () => json({ detail: "Invalid username or password" }, { status: 401 }),
    });
    const { user } = renderApp("/login");

    await user.type(screen.getByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "wrong");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    expect(await screen.findByRole("alert")).toHaveTextContent("Invalid username or password");
    const [request] = fake.calls("POST", "/api/auth/login");
    expect(await request?.json()).toEqual({ username: "alice", password: "wrong" });
    expect(screen.getByTestId("location")).toHaveTextContent("/login");
  });

  it("shows the rate-limit message on 429", async () => {
    installFakeFetch({
      "POST /api/auth/login": () =>
        json(
          { detail: "Too many failed sign-in attempts; try again later" },
          { status: 429, headers: { "Retry-After": "60" } },
        ),
    });
    const { user } = renderApp("/login");

    await user.type(screen.getByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "x");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Too many failed sign-in attempts; try again later");
    expect(alert).toHaveTextContent("60 s");
  });

  it("goes to the page the user wanted after signing in", async () => {
    let signedIn = false;
    installFakeFetch({
      "GET /api/auth/me": () => (signedIn ? json(adminUser) : unauthorized()),
      "POST /api/auth/login": () => {
        signedIn = true;
        return json({ user: adminUser });
      },
      "GET /api/health": health,
      "GET /api/system/info": systemInfo,
      "GET /api/auth/tokens": [],
      "GET /api/users": [],
      "GET /api/audit": { items: [], total: 0 },
    });
    const { user } = renderApp("/settings");

    await user.type(await screen.findByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "secret");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    expect(await screen.findByRole("heading", { level: 1, name: "Settings" })).toBeInTheDocument();
    expect(screen.getByTestId("location")).toHaveTextContent("/settings");
  });

  it("goes to the dashboard by default", async () => {
    installFakeFetch({
      "POST /api/auth/login": { user: adminUser },
      "GET /api/auth/me": adminUser,
      "GET /api/health": health,
      "GET /api/system/info": systemInfo,
    });
    const { user } = renderApp("/login");

    await user.type(screen.getByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "secret");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    expect(await screen.findByRole("heading", { level: 1, name: "Dashboard" })).toBeInTheDocument();
  });

  it("sends the user back to /login when the session expires while browsing", async () => {
    let expired = false;
    installFakeFetch({
      "GET /api/auth/me": () => (expired ? unauthorized() : json(adminUser)),
      "GET /api/health": health,
      "GET /api/auth/tokens": () => (expired ? unauthorized() : json([])),
      "GET /api/users": [],
      "GET /api/audit": { items: [], total: 0 },
      "GET /api/system/info": () => (expired ? unauthorized() : json(systemInfo)),
    });
    const { user } = renderApp("/settings");
    expect(await screen.findByRole("heading", { level: 1, name: "Settings" })).toBeInTheDocument();

    expired = true;
    await user.click(screen.getByRole("link", { name: "Dashboard" }));

    expect(await screen.findByRole("button", { name: "Sign in" })).toBeInTheDocument();
    expect(screen.getByTestId("location")).toHaveTextContent("/login");
  });

  it("offers the identity provider and goes there, back to the page the user wanted", async () => {
    installFakeFetch({
      "GET /api/auth/me": unauthorized,
      "GET /api/auth/sign-in-options": {
        provider: { name: "Keycloak", start_url: "/api/auth/oidc/start" },
        password_sign_in: "admins",
      },
    });
    const { user } = renderApp("/stacks/web");

    await user.click(await screen.findByRole("button", { name: "Sign in with Keycloak" }));
    expect(leaveFor).toHaveBeenCalledWith("/api/auth/oidc/start?next=%2Fstacks%2Fweb");
    // The password form stays, as the break-glass path.
    expect(screen.getByLabelText("Username")).toBeInTheDocument();
    expect(screen.getByText("Password sign-in is kept for admins.")).toBeInTheDocument();
  });

  it("shows why the provider's sign-in came back here, in its own words for the code", async () => {
    installFakeFetch({
      "GET /api/auth/me": unauthorized,
      "GET /api/auth/sign-in-options": {
        provider: { name: "Keycloak", start_url: "/api/auth/oidc/start" },
        password_sign_in: "everyone",
      },
    });
    renderApp("/login?error=no_role");
    const said = await screen.findByText("Your account at Keycloak is in no group that has a role here: ask an admin.");
    expect(said).toHaveAttribute("role", "alert");
  });

  it("never shows text from the address: an unknown code gets the general message", async () => {
    installFakeFetch({ "GET /api/auth/me": unauthorized });
    const spoof = "Your account is locked: call +1 555 0100";
    renderApp(`/login?error=${encodeURIComponent(spoof)}`);
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("did not succeed: an admin finds why in the audit log");
    expect(alert).not.toHaveTextContent("555");
    expect(document.body).not.toHaveTextContent("call +1 555");
  });

  it("asks for the two-factor code after the password, and sends both", async () => {
    const fake = installFakeFetch({
      "GET /api/auth/me": adminUser,
      "GET /api/health": health,
      "GET /api/system/info": systemInfo,
      "POST /api/auth/login": async (request: Request) => {
        const body = (await request.json()) as { code?: string };
        if (!body.code) return json({ user: null, code_needed: true });
        if (body.code !== "123456") return json({ detail: "Invalid username, password or code" }, { status: 401 });
        return json({ user: adminUser, code_needed: false });
      },
    });
    const { user } = renderApp("/login");
    await user.type(screen.getByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "secret");
    await user.click(screen.getByRole("button", { name: "Sign in" }));

    const code = await screen.findByLabelText("Code from your authenticator app (or a recovery code)");
    expect(screen.getByTestId("location")).toHaveTextContent("/login");
    await user.type(code, "000000");
    await user.click(screen.getByRole("button", { name: "Verify" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Invalid username, password or code");
    await user.clear(code);
    await user.type(code, "123456");
    await user.click(screen.getByRole("button", { name: "Verify" }));

    expect(await screen.findByRole("heading", { level: 1, name: "Dashboard" })).toBeInTheDocument();
    const sent = await Promise.all(fake.calls("POST", "/api/auth/login").map((r) => r.json()));
    expect(sent.at(-1)).toEqual({ username: "alice", password: "secret", code: "123456" });
  });

  it("shows the throttling at the code step, and goes back to the password", async () => {
    installFakeFetch({
      "GET /api/auth/me": unauthorized,
      "POST /api/auth/login": async (request: Request) => {
        const body = (await request.json()) as { code?: string };
        if (!body.code) return json({ user: null, code_needed: true });
        return json({ detail: "Too many failed sign-in attempts; try again later" }, { status: 429 });
      },
    });
    const { user } = renderApp("/login");
    await user.type(screen.getByLabelText("Username"), "alice");
    await user.type(screen.getByLabelText("Password"), "secret");
    await user.click(screen.getByRole("button", { name: "Sign in" }));
    const code = await screen.findByLabelText("Code from your authenticator app (or a recovery code)");
    expect(code).toHaveAttribute("autocomplete", "one-time-code");
    await user.type(code, "aaaa-bbbb");
    await user.click(screen.getByRole("button", { name: "Verify" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Too many failed sign-in attempts");

    await user.click(screen.getByRole("button", { name: "Use another account" }));
    expect(screen.getByLabelText("Username")).toHaveValue("alice");
    expect(screen.getByLabelText("Password")).toHaveValue("");
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });
});
