import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { ApiToken, AuditEntry, UserRow } from "../../api/types";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, identityProvider, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makePolicy } from "../../test/stackFixtures";

const tokens: ApiToken[] = [
  { id: 3, name: "ci", created_at: "2025-01-02T03:04:05Z", last_used_at: null, expires_at: null },
  {
    id: 4,
    name: "backup-script",
    created_at: "2025-01-03T03:04:05Z",
    last_used_at: "2025-01-04T00:00:00Z",
    expires_at: null,
  },
];

const LOCAL = { email: null, two_factor: false, two_factor_required: false, provider_account: false };
const users: UserRow[] = [
  { id: 1, username: "alice", role: "admin", disabled: false, created_at: "2025-01-01T00:00:00Z", ...LOCAL },
  { id: 2, username: "bob", role: "operator", disabled: false, created_at: "2025-01-02T00:00:00Z", ...LOCAL },
  { id: 3, username: "carol", role: "viewer", disabled: true, created_at: "2025-01-03T00:00:00Z", ...LOCAL },
];

function auditEntries(count: number, start = 0): AuditEntry[] {
  return Array.from({ length: count }, (_, i) => ({
    id: start + i + 1,
    at: "2025-02-01T10:00:00Z",
    actor: "alice",
    action: `action.${start + i + 1}`,
    outcome: i % 2 ? "failure" : "success",
    target: i === 1 ? null : "stack:web",
    detail: i === 2 ? null : `detail ${start + i + 1}`,
  }));
}

describe("settings below admin", () => {
  it.each([
    ["an operator", operatorUser],
    ["a viewer", viewerUser],
  ])("shows %s account and tokens but hides the admin-only sections", async (_who, signedIn) => {
    const fake = installFakeFetch({ ...signedInAs(signedIn), "GET /api/auth/tokens": tokens });
    renderApp("/settings");

    expect(await screen.findByRole("heading", { level: 1, name: "Settings" })).toBeInTheDocument();
    expect(screen.getByRole("region", { name: "Account" })).toBeInTheDocument();
    expect(await screen.findByRole("region", { name: "API tokens" })).toBeInTheDocument();
    expect(await screen.findByText("backup-script")).toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Users" })).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Audit log" })).not.toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Registry credentials" })).not.toBeInTheDocument();
    expect(screen.queryByRole("heading", { name: "Users" })).not.toBeInTheDocument();
    expect(fake.calls("GET", "/api/users")).toHaveLength(0);
    expect(fake.calls("GET", "/api/audit")).toHaveLength(0);
    expect(fake.calls("GET", "/api/registries")).toHaveLength(0);
    expect(screen.queryByRole("region", { name: "Default update policy" })).not.toBeInTheDocument();
    expect(fake.calls("GET", "/api/stacks/update-policy")).toHaveLength(0);
  });
});

describe("settings for an admin", () => {
  function adminRoutes(extra = {}) {
    return {
      ...signedInAs(adminUser),
      "GET /api/auth/tokens": tokens,
      "GET /api/users": users,
      "GET /api/registries": [],
      "GET /api/stacks/update-policy": makePolicy(),
      "GET /api/identity-provider": identityProvider,
      "GET /api/audit": (request: Request) => {
        const url = new URL(request.url);
        const offset = Number(url.searchParams.get("offset") ?? 0);
        const limit = Number(url.searchParams.get("limit") ?? 50);
        return json({ items: auditEntries(Math.min(limit, 60 - offset), offset), total: 60 });
      },
      ...extra,
    };
  }

  it("shows the users and the audit log", async () => {
    installFakeFetch(adminRoutes());
    renderApp("/settings");

    const usersRegion = await screen.findByRole("region", { name: "Users" });
    expect(await within(usersRegion).findByRole("cell", { name: "bob" })).toBeInTheDocument();
    // No delete button for yourself.
    expect(within(usersRegion).queryByRole("button", { name: "Delete user alice" })).not.toBeInTheDocument();
    expect(within(usersRegion).getByRole("button", { name: "Delete user bob" })).toBeInTheDocument();

    const audit = screen.getByRole("region", { name: "Audit log" });
    const table = await within(audit).findByRole("table", { name: "Audit log" });
    expect(within(table).getAllByRole("columnheader").map((h) => h.textContent)).toEqual([
      "Time",
      "Actor",
      "Action",
      "Target",
      "Outcome",
      "Detail",
    ]);
    expect(within(table).getByText("action.1")).toBeInTheDocument();
    expect(within(audit).getByText("1–50 of 60")).toBeInTheDocument();
  });

  it("pages through the audit log with limit and offset", async () => {
    const fake = installFakeFetch(adminRoutes());
    const { user } = renderApp("/settings");

    const audit = await screen.findByRole("region", { name: "Audit log" });
    await within(audit).findByText("action.1");
    expect(within(audit).getByRole("button", { name: "Previous" })).toBeDisabled();
    await user.click(within(audit).getByRole("button", { name: "Next" }));

    expect(await within(audit).findByText("action.51")).toBeInTheDocument();
    expect(within(audit).getByText("51–60 of 60")).toBeInTheDocument();
    expect(within(audit).getByRole("button", { name: "Next" })).toBeDisabled();
    const last = fake.calls("GET", "/api/audit").at(-1);
    expect(new URL(last?.url ?? "").searchParams.toString()).toBe("limit=50&offset=50");
  });

  it("creates a user with a role and refreshes the list", async () => {
    const fake = installFakeFetch(
      adminRoutes({
        "POST /api/users": () =>
          json(
            { id: 5, username: "dave", role: "admin", disabled: false, created_at: "2025-03-01T00:00:00Z" },
            { status: 201 },
          ),
      }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await within(region).findByRole("cell", { name: "bob" });
    const form = within(region).getByRole("form", { name: "Create user" });
    const roleSelect = within(form).getByLabelText("Role");
    expect(within(roleSelect).getAllByRole("option").map((o) => o.textContent)).toEqual(["admin", "operator", "viewer"]);
    expect(roleSelect).toHaveValue("viewer");
    expect(roleSelect).toHaveAccessibleDescription(/Reads only/);
    await user.type(within(form).getByLabelText("Username"), "dave");
    await user.type(within(form).getByLabelText("Password"), "pw-123456");
    await user.selectOptions(roleSelect, "operator");
    expect(roleSelect).toHaveAccessibleDescription(/Runs stack actions/);
    await user.selectOptions(roleSelect, "admin");
    expect(roleSelect).toHaveAccessibleDescription(/Everything/);
    await user.click(within(form).getByRole("button", { name: "Create user" }));

    expect(await within(region).findByRole("status")).toHaveTextContent("User dave created.");
    const [post] = fake.calls("POST", "/api/users");
    expect(await post?.json()).toEqual({ username: "dave", password: "pw-123456", role: "admin" });
    await waitFor(() => expect(fake.calls("GET", "/api/users").length).toBeGreaterThanOrEqual(2));
  });

  it("deletes a user after confirmation", async () => {
    const fake = installFakeFetch(adminRoutes({ "DELETE /api/users/:username": () => noContent() }));
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await user.click(await within(region).findByRole("button", { name: "Delete user bob" }));
    expect(fake.calls("DELETE", "/api/users/bob")).toHaveLength(0);
    await user.click(within(region).getByRole("button", { name: "Confirm" }));

    await waitFor(() => expect(fake.calls("DELETE", "/api/users/bob")).toHaveLength(1));
  });

  it("reads the audit log again after a change, and after a refused one (the server audits both)", async () => {
    const fake = installFakeFetch(
      adminRoutes({
        "POST /api/users": () => json({ detail: "User already exists" }, { status: 409 }),
        "DELETE /api/users/:username": () => noContent(),
      }),
    );
    const { user } = renderApp("/settings");
    const audit = await screen.findByRole("region", { name: "Audit log" });
    await within(audit).findByText("action.1");
    const region = screen.getByRole("region", { name: "Users" });
    const readsBefore = fake.calls("GET", "/api/audit").length;

    const form = within(region).getByRole("form", { name: "Create user" });
    await user.type(within(form).getByLabelText("Username"), "bob");
    await user.type(within(form).getByLabelText("Password"), "pw");
    await user.click(within(form).getByRole("button", { name: "Create user" }));
    expect(await within(region).findByRole("alert")).toHaveTextContent("User already exists");
    await waitFor(() => expect(fake.calls("GET", "/api/audit").length).toBe(readsBefore + 1));

    await user.click(within(region).getByRole("button", { name: "Delete user bob" }));
    await user.click(within(region).getByRole("button", { name: "Confirm" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/users/bob")).toHaveLength(1));
    await waitFor(() => expect(fake.calls("GET", "/api/audit").length).toBe(readsBefore + 2));
  });

  it("shows the server's detail when a user action fails", async () => {
    installFakeFetch(
      adminRoutes({ "POST /api/users": () => json({ detail: "User already exists" }, { status: 409 }) }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    const form = within(region).getByRole("form", { name: "Create user" });
    await user.type(within(form).getByLabelText("Username"), "bob");
    await user.type(within(form).getByLabelText("Password"), "pw");
    await user.click(within(form).getByRole("button", { name: "Create user" }));

    expect(await within(region).findByRole("alert")).toHaveTextContent("User already exists");
  });
});

describe("API tokens", () => {
  it("creates a token and shows it once with a copy button", async () => {
    const fake = installFakeFetch({
      ...signedInAs(operatorUser),
      "GET /api/auth/tokens": tokens,
      "POST /api/auth/tokens": () => json({ id: 9, name: "deploy", token: "sy_secret_value" }, { status: 201 }),
    });
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "API tokens" });
    await user.type(within(region).getByLabelText("Token name"), "deploy");
    const password = within(region).getByLabelText("Your current password");
    expect(password).toHaveAttribute("type", "password");
    expect(password).toHaveAttribute("autocomplete", "current-password");
    await user.type(password, "my-pw");
    await user.click(within(region).getByRole("button", { name: "Create token" }));

    const notice = await within(region).findByRole("region", { name: "New API token" });
    expect(within(notice).getByText("sy_secret_value")).toBeInTheDocument();
    expect(await fake.calls("POST", "/api/auth/tokens")[0]?.json()).toEqual({ name: "deploy", password: "my-pw" });
    expect(password).toHaveValue("");

    await user.click(within(notice).getByRole("button", { name: "Copy" }));
    // user-event provides the clipboard in tests.
    expect(await navigator.clipboard.readText()).toBe("sy_secret_value");
    expect(await within(notice).findByRole("status")).toHaveTextContent("Copied");

    await user.click(within(notice).getByRole("button", { name: "Done" }));
    expect(screen.queryByText("sy_secret_value")).not.toBeInTheDocument();
    await waitFor(() => expect(fake.calls("GET", "/api/auth/tokens").length).toBeGreaterThanOrEqual(2));
  });

  it("shows the server's detail when the password is wrong, and keeps the form", async () => {
    const fake = installFakeFetch({
      ...signedInAs(viewerUser),
      "GET /api/auth/tokens": tokens,
      "POST /api/auth/tokens": () => json({ detail: "The password is not correct" }, { status: 403 }),
    });
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "API tokens" });
    await user.type(within(region).getByLabelText("Token name"), "deploy");
    await user.type(within(region).getByLabelText("Your current password"), "wrong");
    await user.click(within(region).getByRole("button", { name: "Create token" }));

    expect(await within(region).findByRole("alert")).toHaveTextContent("The password is not correct");
    expect(await fake.calls("POST", "/api/auth/tokens")[0]?.json()).toEqual({ name: "deploy", password: "wrong" });
    expect(within(region).queryByRole("region", { name: "New API token" })).not.toBeInTheDocument();
    expect(within(region).getByLabelText("Token name")).toHaveValue("deploy");
  });

  it("deletes a token after confirmation", async () => {
    const fake = installFakeFetch({
      ...signedInAs(operatorUser),
      "GET /api/auth/tokens": tokens,
      "DELETE /api/auth/tokens/:id": () => noContent(),
    });
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "API tokens" });
    await user.click(await within(region).findByRole("button", { name: "Delete token ci" }));
    await user.click(within(region).getByRole("button", { name: "Confirm" }));

    await waitFor(() => expect(fake.calls("DELETE", "/api/auth/tokens/3")).toHaveLength(1));
  });
});

describe("change password", () => {
  it("sends the current and new password, says what else ended and refreshes the tokens", async () => {
    let changed = false;
    const fake = installFakeFetch({
      ...signedInAs(operatorUser),
      "GET /api/auth/tokens": () => json(changed ? [] : tokens),
      "PUT /api/auth/password": () => {
        changed = true;
        return noContent();
      },
    });
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Account" });
    const tokensRegion = screen.getByRole("region", { name: "API tokens" });
    expect(await within(tokensRegion).findByText("backup-script")).toBeInTheDocument();
    await user.type(within(region).getByLabelText("Current password"), "old-pw");
    await user.type(within(region).getByLabelText("New password"), "new-pw-123");
    await user.type(within(region).getByLabelText("Confirm new password"), "new-pw-123");
    await user.click(within(region).getByRole("button", { name: "Change password" }));

    const status = await within(region).findByRole("status");
    expect(status).toHaveTextContent("Password changed.");
    expect(status).toHaveTextContent("Your other sign-ins have ended and all your API tokens were revoked");
    expect(await fake.calls("PUT", "/api/auth/password")[0]?.json()).toEqual({
      current_password: "old-pw",
      new_password: "new-pw-123",
    });
    expect(await within(tokensRegion).findByText("No API tokens yet.")).toBeInTheDocument();
    expect(fake.calls("GET", "/api/auth/tokens")).toHaveLength(2);
  });

  it("refuses mismatched new passwords without calling the server", async () => {
    const fake = installFakeFetch({ ...signedInAs(operatorUser), "GET /api/auth/tokens": [] });
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Account" });
    await user.type(within(region).getByLabelText("Current password"), "old-pw");
    await user.type(within(region).getByLabelText("New password"), "aaa");
    await user.type(within(region).getByLabelText("Confirm new password"), "bbb");
    await user.click(within(region).getByRole("button", { name: "Change password" }));

    expect(await within(region).findByRole("alert")).toHaveTextContent("do not match");
    expect(fake.calls("PUT", "/api/auth/password")).toHaveLength(0);
  });

  it("shows the server's detail when the current password is wrong", async () => {
    installFakeFetch({
      ...signedInAs(operatorUser),
      "GET /api/auth/tokens": [],
      "PUT /api/auth/password": () => json({ detail: "Current password is wrong" }, { status: 400 }),
    });
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Account" });
    await user.type(within(region).getByLabelText("Current password"), "nope");
    await user.type(within(region).getByLabelText("New password"), "x1");
    await user.type(within(region).getByLabelText("Confirm new password"), "x1");
    await user.click(within(region).getByRole("button", { name: "Change password" }));

    expect(await within(region).findByRole("alert")).toHaveTextContent("Current password is wrong");
  });
});

describe("admin sets another user's password", () => {
  it("sends the new password for that user", async () => {
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/auth/tokens": [],
      "GET /api/users": users,
      "GET /api/registries": [],
      "GET /api/audit": { items: [], total: 0 },
      "PUT /api/users/:username/password": () => noContent(),
    });
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await user.click(await within(region).findByRole("button", { name: "Set password of bob" }));
    await user.type(within(region).getByLabelText("New password for bob"), "fresh-pw-1");
    await user.click(within(region).getByRole("button", { name: "Set password" }));

    expect(await within(region).findByRole("status")).toHaveTextContent(
      "Password of bob changed; their sessions ended and their API tokens were revoked.",
    );
    expect(await fake.calls("PUT", "/api/users/bob/password")[0]?.json()).toEqual({ password: "fresh-pw-1" });
  });
});

describe("user management", () => {
  function routes(extra: Routes = {}): Routes {
    return {
      ...signedInAs(adminUser),
      "GET /api/auth/tokens": [],
      "GET /api/users": users,
      "GET /api/registries": [],
      "GET /api/audit": { items: [], total: 0 },
      ...extra,
    };
  }

  function rowOf(region: HTMLElement, username: string): HTMLElement {
    const row = within(region).getByRole("cell", { name: username }).closest("tr");
    if (!row) throw new Error(`no row for ${username}`);
    return row;
  }

  it("marks disabled users and offers no changes to yourself", async () => {
    installFakeFetch(routes());
    renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await within(region).findByRole("cell", { name: "carol" });
    expect(rowOf(region, "carol")).toHaveTextContent("Disabled");
    expect(rowOf(region, "bob")).not.toHaveTextContent("Disabled");
    expect(within(rowOf(region, "carol")).getByRole("button", { name: "Enable user carol" })).toBeInTheDocument();
    expect(within(rowOf(region, "bob")).getByRole("button", { name: "Disable user bob" })).toBeInTheDocument();
    const mine = rowOf(region, "alice");
    expect(within(mine).queryAllByRole("button")).toHaveLength(0);
    expect(mine).toHaveTextContent("you");
  });

  it("disables a user after confirmation and refreshes the list", async () => {
    let current = users;
    const fake = installFakeFetch(
      routes({
        "GET /api/users": () => json(current),
        "PATCH /api/users/:username": async (request, params) => {
          const change = (await request.json()) as Partial<UserRow>;
          current = current.map((u) => (u.username === params.username ? { ...u, ...change } : u));
          return json(current.find((u) => u.username === params.username));
        },
      }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await within(region).findByRole("cell", { name: "bob" });
    await user.click(within(rowOf(region, "bob")).getByRole("button", { name: "Disable user bob" }));
    expect(fake.calls("PATCH", "/api/users/bob")).toHaveLength(0);
    await user.click(within(rowOf(region, "bob")).getByRole("button", { name: "Confirm" }));

    expect(await within(region).findByRole("status")).toHaveTextContent(
      "bob is disabled; their sessions ended and their API tokens were revoked.",
    );
    const [patch] = fake.calls("PATCH", "/api/users/bob");
    expect(await patch?.json()).toEqual({ disabled: true });
    expect(await within(rowOf(region, "bob")).findByRole("button", { name: "Enable user bob" })).toBeInTheDocument();
    expect(rowOf(region, "bob")).toHaveTextContent("Disabled");
    expect(fake.calls("GET", "/api/users").length).toBeGreaterThanOrEqual(2);
  });

  it("enables a disabled user", async () => {
    const fake = installFakeFetch(
      routes({ "PATCH /api/users/:username": () => json({ ...users[2], disabled: false }) }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await user.click(await within(region).findByRole("button", { name: "Enable user carol" }));

    expect(await within(region).findByRole("status")).toHaveTextContent("carol can sign in again.");
    expect(await fake.calls("PATCH", "/api/users/carol")[0]?.json()).toEqual({ disabled: false });
  });

  it("changes a user's role", async () => {
    const fake = installFakeFetch(
      routes({ "PATCH /api/users/:username": () => json({ ...users[1], role: "viewer" }) }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await user.click(await within(region).findByRole("button", { name: "Change role of bob" }));
    const form = within(region).getByRole("form", { name: "Change role of bob" });
    const select = within(form).getByLabelText("New role for bob");
    expect(select).toHaveValue("operator");
    expect(within(form).getByRole("button", { name: "Save role" })).toBeDisabled();
    await user.selectOptions(select, "viewer");
    expect(select).toHaveAccessibleDescription(/Reads only/);
    await user.click(within(form).getByRole("button", { name: "Save role" }));

    expect(await within(region).findByRole("status")).toHaveTextContent("bob is now viewer; their sessions ended.");
    expect(await fake.calls("PATCH", "/api/users/bob")[0]?.json()).toEqual({ role: "viewer" });
    expect(within(region).queryByRole("form", { name: "Change role of bob" })).not.toBeInTheDocument();
  });

  it("shows the server's detail when a role change is refused", async () => {
    installFakeFetch(
      routes({
        "PATCH /api/users/:username": () =>
          json({ detail: "The last admin cannot be demoted or disabled" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await user.click(await within(region).findByRole("button", { name: "Change role of bob" }));
    const form = within(region).getByRole("form", { name: "Change role of bob" });
    await user.selectOptions(within(form).getByLabelText("New role for bob"), "admin");
    await user.click(within(form).getByRole("button", { name: "Save role" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent("The last admin cannot be demoted or disabled");
  });

  it("shows the server's detail when disabling is refused", async () => {
    installFakeFetch(
      routes({
        "PATCH /api/users/:username": () => json({ detail: "You cannot disable yourself" }, { status: 403 }),
      }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    await user.click(await within(region).findByRole("button", { name: "Disable user bob" }));
    await user.click(within(region).getByRole("button", { name: "Confirm" }));

    expect(await within(region).findByRole("alert")).toHaveTextContent("You cannot disable yourself");
  });

  it("lists a user's API tokens and revokes one after confirmation", async () => {
    let bobTokens = tokens;
    const fake = installFakeFetch(
      routes({
        "GET /api/users/:username/tokens": () => json(bobTokens),
        "DELETE /api/users/:username/tokens/:id": (_request, params) => {
          bobTokens = bobTokens.filter((t) => String(t.id) !== params.id);
          return noContent();
        },
      }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Users" });
    expect(fake.calls("GET", "/api/users/bob/tokens")).toHaveLength(0);
    await user.click(await within(region).findByRole("button", { name: "API tokens of bob" }));
    const panel = within(region).getByRole("region", { name: "API tokens of bob" });
    const table = await within(panel).findByRole("table", { name: "API tokens of bob" });
    expect(within(table).getByText("ci")).toBeInTheDocument();
    expect(within(table).getByText("backup-script")).toBeInTheDocument();

    await user.click(within(panel).getByRole("button", { name: "Revoke token ci of bob" }));
    expect(fake.calls("DELETE", "/api/users/bob/tokens/3")).toHaveLength(0);
    await user.click(within(panel).getByRole("button", { name: "Confirm" }));

    await waitFor(() => expect(fake.calls("DELETE", "/api/users/bob/tokens/3")).toHaveLength(1));
    await waitFor(() => expect(within(panel).queryByText("ci")).not.toBeInTheDocument());
    expect(within(panel).getByText("backup-script")).toBeInTheDocument();
    expect(fake.calls("GET", "/api/users/bob/tokens").length).toBeGreaterThanOrEqual(2);

    await user.click(within(panel).getByRole("button", { name: "Close API tokens of bob" }));
    expect(within(region).queryByRole("region", { name: "API tokens of bob" })).not.toBeInTheDocument();
  });
});

describe("registry credentials", () => {
  function routes(extra = {}) {
    return {
      ...signedInAs(adminUser),
      "GET /api/auth/tokens": [],
      "GET /api/users": users,
      "GET /api/audit": { items: [], total: 0 },
      "GET /api/registries": [
        { registry: "ghcr.io", username: "octocat" },
        { registry: "registry.example.com:5000", username: "deploy" },
      ],
      ...extra,
    };
  }

  it("lists the registries with their usernames", async () => {
    installFakeFetch(routes());
    renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Registry credentials" });
    const table = await within(region).findByRole("table", { name: "Registry credentials" });
    expect(within(table).getAllByRole("row").map((r) => r.textContent)).toEqual([
      "RegistryUsernameActions",
      "ghcr.iooctocatDelete",
      "registry.example.com:5000deployDelete",
    ]);
  });

  it("adds credentials without ever showing the password", async () => {
    const fake = installFakeFetch(
      routes({ "PUT /api/registries": () => json({ registry: "docker.io", username: "me" }) }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Registry credentials" });
    const form = within(region).getByRole("form", { name: "Add registry credentials" });
    await user.type(within(form).getByLabelText("Registry"), "docker.io");
    await user.type(within(form).getByLabelText("Registry username"), "me");
    const password = within(form).getByLabelText("Registry password or token");
    expect(password).toHaveAttribute("type", "password");
    await user.type(password, "s3cret-pw");
    await user.click(within(form).getByRole("button", { name: "Save credentials" }));

    expect(await within(region).findByRole("status")).toHaveTextContent("Credentials for docker.io saved.");
    expect(await fake.calls("PUT", "/api/registries")[0]?.json()).toEqual({
      registry: "docker.io",
      username: "me",
      password: "s3cret-pw",
    });
    expect(password).toHaveValue("");
    expect(screen.queryByText(/s3cret-pw/)).not.toBeInTheDocument();
    await waitFor(() => expect(fake.calls("GET", "/api/registries").length).toBeGreaterThanOrEqual(2));
  });

  it("deletes credentials after confirmation", async () => {
    const fake = installFakeFetch(routes({ "DELETE /api/registries/:registry": () => noContent() }));
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Registry credentials" });
    await user.click(await within(region).findByRole("button", { name: "Delete credentials for registry.example.com:5000" }));
    await user.click(within(region).getByRole("button", { name: "Confirm" }));
    await waitFor(() => expect(fake.requests.filter((r) => r.method === "DELETE")).toHaveLength(1));
    const [request] = fake.requests.filter((r) => r.method === "DELETE");
    expect(decodeURIComponent(new URL(request?.url ?? "").pathname)).toBe("/api/registries/registry.example.com:5000");
  });

  it("shows the server's detail when saving fails", async () => {
    installFakeFetch(
      routes({ "PUT /api/registries": () => json({ detail: "Invalid registry host" }, { status: 400 }) }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Registry credentials" });
    const form = within(region).getByRole("form", { name: "Add registry credentials" });
    await user.type(within(form).getByLabelText("Registry"), "bad host");
    await user.type(within(form).getByLabelText("Registry username"), "me");
    await user.type(within(form).getByLabelText("Registry password or token"), "pw");
    await user.click(within(form).getByRole("button", { name: "Save credentials" }));
    expect(await within(region).findByRole("alert")).toHaveTextContent("Invalid registry host");
  });
});
