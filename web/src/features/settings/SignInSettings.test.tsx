import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it, vi } from "vitest";
import type { IdentityProviderSettings, UserRow } from "../../api/types";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, identityProvider as provider, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makePolicy } from "../../test/stackFixtures";
import twoFactorSetup from "../../test/twoFactorSetup.json";


const LOCAL = { email: null, two_factor: false, two_factor_required: false, provider_account: false };
const users: UserRow[] = [
  { id: 1, username: "alice", role: "admin", disabled: false, created_at: "2025-01-01T00:00:00Z", ...LOCAL },
  {
    id: 2,
    username: "bob",
    role: "operator",
    disabled: false,
    created_at: "2025-01-02T00:00:00Z",
    ...LOCAL,
    two_factor: true,
    email: "bob@example.com",
  },
  { id: 3, username: "ivy", role: "viewer", disabled: false, created_at: "2025-01-03T00:00:00Z", ...LOCAL, provider_account: true },
  {
    id: 4,
    username: "dan",
    role: "viewer",
    disabled: false,
    created_at: "2025-01-04T00:00:00Z",
    ...LOCAL,
    two_factor_required: true,
  },
];

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/auth/tokens": [],
    "GET /api/users": users,
    "GET /api/registries": [],
    "GET /api/stacks/update-policy": makePolicy(),
    "GET /api/audit": { items: [], total: 0 },
    "GET /api/identity-provider": provider,
    ...extra,
  };
}

describe("two-factor sign-in of your account", () => {
  it("is set up with the password, the QR code and a code, and shows the recovery codes once", async () => {
    let on = false;
    const fake = installFakeFetch(
      routes({
        "GET /api/auth/me": () => json({ ...adminUser, two_factor: on, recovery_codes_left: on ? 10 : 0 }),
        // What the server sends (tests/auth/test_totp.py keeps it so).
        "POST /api/auth/two-factor/setup": twoFactorSetup,
        "POST /api/auth/two-factor/confirm": () => {
          on = true;
          return json({ recovery_codes: ["aaa111-bbb222", "ccc333-ddd444"] });
        },
      }),
    );
    const { user } = renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Two-factor sign-in" });
    await user.type(within(section).getByLabelText("Your password"), "secret");
    await user.click(within(section).getByRole("button", { name: "Set up" }));

    const qr = await within(section).findByRole("img", { name: /QR code/ });
    // A standalone SVG document, namespace and all: a browser draws nothing without it.
    const src = qr.getAttribute("src") ?? "";
    expect(src).toMatch(/^data:image\/svg\+xml;utf8,%3Csvg/);
    expect(decodeURIComponent(src.split(",")[1] ?? "")).toMatch(/^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
    expect(within(section).getByTestId("totp-secret")).toHaveTextContent("JBSWY3DPEHPK3PXP");
    await user.type(within(section).getByLabelText("Code from the app"), "123456");
    await user.click(within(section).getByRole("button", { name: "Turn on" }));

    const codes = await within(section).findByRole("region", { name: "Recovery codes" });
    expect(codes).toHaveTextContent("aaa111-bbb222");
    await user.click(within(codes).getByRole("button", { name: "I have saved them" }));
    expect(await within(section).findByText(/10 recovery codes left/)).toBeInTheDocument();
    expect(screen.queryByText("aaa111-bbb222")).not.toBeInTheDocument();
    const [setup] = fake.calls("POST", "/api/auth/two-factor/setup");
    expect(await setup?.json()).toEqual({ password: "secret" });
  });

  it("when an admin requires it: set up first, the recovery codes shown, then the rest of Settings", async () => {
    let on = false;
    installFakeFetch(
      routes({
        "GET /api/auth/me": () =>
          json({ ...adminUser, two_factor: on, two_factor_due: !on, recovery_codes_left: on ? 10 : 0 }),
        "POST /api/auth/two-factor/setup": twoFactorSetup,
        "POST /api/auth/two-factor/confirm": () => {
          on = true;
          return json({ recovery_codes: ["aaa111-bbb222"] });
        },
      }),
    );
    const { user } = renderApp("/stacks");
    const section = await screen.findByRole("region", { name: "Two-factor sign-in" });
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/settings"));
    // Nothing the server refuses until then: no password change, no other section.
    expect(screen.queryByRole("form", { name: "Change password" })).not.toBeInTheDocument();
    expect(screen.queryByRole("heading", { name: "Users" })).not.toBeInTheDocument();
    await user.type(within(section).getByLabelText("Your password"), "secret");
    await user.click(within(section).getByRole("button", { name: "Set up" }));
    await user.type(await within(section).findByLabelText("Code from the app"), "123456");
    await user.click(within(section).getByRole("button", { name: "Turn on" }));

    // The codes stay on screen while the rest of Settings appears around them.
    expect(await screen.findByRole("heading", { name: "Users" })).toBeInTheDocument();
    const codes = await screen.findByRole("region", { name: "Recovery codes" });
    expect(codes).toHaveTextContent("aaa111-bbb222");
    expect(screen.queryByText(/requires two-factor sign-in for your account/)).not.toBeInTheDocument();
    await user.click(within(codes).getByRole("button", { name: "I have saved them" }));
    expect(await screen.findByText(/10 recovery codes left/)).toBeInTheDocument();
  });

  it("shows the server's refusal to turn it off", async () => {
    installFakeFetch(
      routes({
        "GET /api/auth/me": { ...adminUser, two_factor: true, recovery_codes_left: 3 },
        "POST /api/auth/two-factor/off": () =>
          json({ detail: "An admin requires two-factor sign-in for this account" }, { status: 403 }),
      }),
    );
    const { user } = renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Two-factor sign-in" });
    expect(within(section).getByText(/3 recovery codes left/)).toBeInTheDocument();
    await user.type(within(section).getByLabelText("Your password"), "secret");
    await user.click(within(section).getByRole("button", { name: "Turn off" }));
    expect(await within(section).findByText(/An admin requires two-factor/)).toBeInTheDocument();
  });

  it("is not offered to an account of the identity provider", async () => {
    installFakeFetch(routes({ "GET /api/auth/me": { ...adminUser, has_password: false } }));
    renderApp("/settings");
    expect(await screen.findByText(/You sign in through your identity provider/)).toBeInTheDocument();
    expect(screen.queryByRole("region", { name: "Two-factor sign-in" })).not.toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Change password" })).not.toBeInTheDocument();
  });
});

describe("users' sign-in, for an admin", () => {
  it("shows badges and requires or resets two-factor", async () => {
    const fake = installFakeFetch(
      routes({
        "PATCH /api/users/:username": async (request: Request) => json({ ...users[1], ...((await request.json()) as object) }),
        "POST /api/users/:username/two-factor/reset": () => noContent(),
      }),
    );
    const { user } = renderApp("/settings");
    const table = await screen.findByRole("table", { name: "Users" });
    const bob = within(table).getByText("bob").closest("tr") as HTMLElement;
    expect(within(bob).getByText("2FA")).toBeInTheDocument();
    expect(within(bob).getByText("bob@example.com")).toBeInTheDocument();
    const ivy = within(table).getByText("ivy").closest("tr") as HTMLElement;
    expect(within(ivy).getByText("SSO")).toBeInTheDocument();
    expect(within(ivy).queryByText("2FA")).not.toBeInTheDocument();
    const dan = within(table).getByText("dan").closest("tr") as HTMLElement;
    expect(within(dan).getByText("2FA required")).toBeInTheDocument();
    expect(within(dan).queryByText("2FA")).not.toBeInTheDocument();
    expect(within(bob).queryByText("2FA required")).not.toBeInTheDocument();

    await user.click(within(bob).getByRole("button", { name: "Sign-in of bob" }));
    const panel = await screen.findByRole("region", { name: "Sign-in of bob" });
    await user.click(within(panel).getByRole("checkbox", { name: "Require two-factor" }));
    await waitFor(() => expect(fake.calls("PATCH", "/api/users/bob")).toHaveLength(1));
    expect(await fake.calls("PATCH", "/api/users/bob")[0]?.json()).toEqual({ two_factor_required: true });
    expect(await screen.findByText(/must set up two-factor sign-in at their next sign-in/)).toBeInTheDocument();

    await user.click(within(bob).getByRole("button", { name: "Sign-in of bob" }));
    const again = await screen.findByRole("region", { name: "Sign-in of bob" });
    await user.click(within(again).getByRole("button", { name: "Reset two-factor of bob" }));
    expect(within(again).getByText(/ends their sessions and API tokens/)).toBeInTheDocument();
    await user.click(within(again).getByRole("button", { name: "Confirm" }));
    await waitFor(() => expect(fake.calls("POST", "/api/users/bob/two-factor/reset")).toHaveLength(1));
  });

  it("says that a linked account's two-factor is not asked at a sign-in through the provider", async () => {
    const linked: UserRow = { ...users[1]!, id: 5, username: "lee", provider_account: true, two_factor: true };
    installFakeFetch(routes({ "GET /api/users": [...users, linked] }));
    const { user } = renderApp("/settings");
    const table = await screen.findByRole("table", { name: "Users" });
    const lee = within(table).getByText("lee").closest("tr") as HTMLElement;
    expect(within(lee).getByText("2FA")).toHaveAttribute("title", expect.stringMatching(/identity provider does not ask it/));
    await user.click(within(lee).getByRole("button", { name: "Sign-in of lee" }));
    const panel = await screen.findByRole("region", { name: "Sign-in of lee" });
    expect(within(panel).getByText(/its two-factor is asked only at password sign-in/)).toBeInTheDocument();

    // A local account's two-factor is asked at every sign-in: nothing to say.
    const bob = within(table).getByText("bob").closest("tr") as HTMLElement;
    expect(within(bob).getByText("2FA")).toHaveAttribute("title", "Two-factor sign-in is on");
    await user.click(within(bob).getByRole("button", { name: "Sign-in of bob" }));
    const bobs = await screen.findByRole("region", { name: "Sign-in of bob" });
    expect(within(bobs).queryByText(/asked only at password sign-in/)).not.toBeInTheDocument();
  });
});

describe("the identity provider, for an admin", () => {
  it("shows the addresses to register and saves without resending the secret", async () => {
    const fake = installFakeFetch(routes({ "PUT /api/identity-provider": provider }));
    const { user } = renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Identity provider" });
    expect(await within(section).findByText(provider.callback_url)).toBeInTheDocument();
    expect(within(section).getByText(provider.post_logout_url)).toBeInTheDocument();
    expect(within(section).getByLabelText(/Client secret \(saved/)).toHaveValue("");

    await user.click(within(section).getByRole("button", { name: "Add a group" }));
    await user.type(within(section).getByLabelText("Group 2"), "yard-ops");
    await user.selectOptions(within(section).getByLabelText("Role of group 2"), "operator");
    await user.selectOptions(within(section).getByLabelText("Users in no mapped group"), "viewer");
    expect(within(section).getByRole("option", { name: "Refuse sign-in" })).toBeInTheDocument();
    expect(within(within(section).getByLabelText("Users in no mapped group")).queryByRole("option", { name: "admin" })).toBeNull();
    await user.type(within(section).getByLabelText(/Scopes/), " groups");
    await user.click(within(section).getByRole("button", { name: "Save" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/identity-provider")).toHaveLength(1));
    const body = (await fake.calls("PUT", "/api/identity-provider")[0]?.json()) as {
      config: IdentityProviderSettings["config"];
      client_secret: string | null;
    };
    expect(body.client_secret).toBeNull();
    expect(body.config.roles).toEqual([
      { value: "yard-admins", role: "admin" },
      { value: "yard-ops", role: "operator" },
    ]);
    expect(body.config.default_role).toBe("viewer");
    expect(body.config.scopes).toEqual(["openid", "profile", "email", "groups"]);
    expect(within(section).queryByRole("option", { name: "admin", selected: true })).toBeInTheDocument();
  });

  it("says, where linking is turned on, that a linked account's own two-factor is not asked", async () => {
    installFakeFetch(routes());
    renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Identity provider" });
    const link = await within(section).findByRole("checkbox", { name: /Link to the local account/ });
    expect(link).toHaveAccessibleDescription(/its Stackyard two-factor is not asked then/);
    expect(link).toHaveAccessibleDescription(/Link only accounts whose provider requires a second factor/);
  });

  it("copies the redirect URI, or says to copy it by hand without a clipboard", async () => {
    installFakeFetch(routes());
    const { user } = renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Identity provider" });
    const writeText = vi.fn(() => Promise.resolve());
    vi.spyOn(navigator, "clipboard", "get").mockReturnValue({ writeText } as unknown as Clipboard);
    await user.click(await within(section).findByRole("button", { name: "Copy the redirect uri" }));
    expect(writeText).toHaveBeenCalledWith(provider.callback_url);
    expect(within(section).getByText("Copied.")).toBeInTheDocument();

    vi.spyOn(navigator, "clipboard", "get").mockReturnValue(undefined as unknown as Clipboard);
    await user.click(within(section).getByRole("button", { name: "Copy the post-logout redirect uri" }));
    expect(within(section).getByText(/copy it by hand/)).toBeInTheDocument();
  });

  it("shows the server's refusal", async () => {
    installFakeFetch(
      routes({
        "PUT /api/identity-provider": () => json({ detail: "The scopes must include openid" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Identity provider" });
    await user.click(await within(section).findByRole("button", { name: "Save" }));
    expect(await within(section).findByText("The scopes must include openid")).toBeInTheDocument();
  });

  it("tests the provider's discovery document as typed, without saving", async () => {
    const where = "https://sso.example.com/realms/homelab/.well-known/openid-configuration";
    let answer = json({ detail: `The discovery document at ${where} names the sign-in at https://sso/auth and the token endpoint at https://sso/token` });
    const fake = installFakeFetch(routes({ "POST /api/identity-provider/test": () => answer }));
    const { user } = renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Identity provider" });
    await user.click(await within(section).findByRole("button", { name: "Test" }));
    expect(await within(section).findByTestId("provider-test")).toHaveTextContent(
      `Test passed: The discovery document at ${where} names the sign-in at https://sso/auth`,
    );
    expect(fake.calls("PUT", "/api/identity-provider")).toHaveLength(0);
    const [sent] = fake.calls("POST", "/api/identity-provider/test");
    expect(((await sent?.json()) as { config: { issuer: string } }).config.issuer).toBe(provider.config.issuer);

    answer = json({ detail: `The discovery document at ${where} cannot be used: not found` }, { status: 400 });
    await user.click(within(section).getByRole("button", { name: "Test" }));
    expect(await within(section).findByRole("alert")).toHaveTextContent("cannot be used: not found");
  });

  it("is read-only when set by settings variables", async () => {
    installFakeFetch(routes({ "GET /api/identity-provider": { ...provider, from_settings_variables: true } }));
    renderApp("/settings");
    const section = await screen.findByRole("region", { name: "Identity provider" });
    expect(await within(section).findByText(/Set by STACKYARD_OIDC_\* settings variables/)).toBeInTheDocument();
    expect(within(section).queryByRole("button", { name: "Save" })).not.toBeInTheDocument();
    expect(within(section).queryByRole("button", { name: "Test" })).not.toBeInTheDocument();
    expect(within(section).getByLabelText("Issuer")).toHaveAttribute("readonly");
    expect(within(section).getByText("Client secret: saved.")).toBeInTheDocument();
    expect(within(section).queryByRole("button", { name: "Add a group" })).not.toBeInTheDocument();
    expect(within(section).getByLabelText("Users in no mapped group")).toBeDisabled();
    // The addresses to register are still there to copy.
    expect(within(section).getByText(provider.callback_url)).toBeInTheDocument();
  });
});
