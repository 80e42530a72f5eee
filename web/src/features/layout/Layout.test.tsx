import { screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from "vitest";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { away } from "../auth/leave";

/** Watches where the app leaves for (each test: the files share their modules). */
let leaveFor: MockInstance<(url: string) => void>;
beforeEach(() => {
  leaveFor = vi.spyOn(away, "leaveFor").mockImplementation(() => undefined);
});
afterEach(() => leaveFor.mockRestore());

describe("layout", () => {
  it("shows the running version from /api/health", async () => {
    installFakeFetch(signedInAs(adminUser));
    renderApp("/");

    expect(await screen.findByText("v0.1.0")).toHaveAttribute("data-testid", "app-version");
    expect(screen.getByTestId("app-version").parentElement).toHaveTextContent("Stackyard v0.1.0");
  });

  it("has the main navigation links", async () => {
    installFakeFetch(signedInAs(adminUser));
    renderApp("/");

    const nav = await screen.findByRole("navigation", { name: "Main" });
    const links = within(nav).getAllByRole("link");
    expect(links.map((a) => [a.textContent, a.getAttribute("href")])).toEqual([
      ["Dashboard", "/"],
      ["Stacks", "/stacks"],
      ["Containers", "/containers"],
      ["Disk", "/disk"],
      ["Files", "/files"],
      ["Backups", "/backups"],
      ["Destinations", "/destinations"],
      ["Schedules", "/schedules"],
      ["Notifications", "/notifications"],
      ["Agents", "/agents"],
      ["Settings", "/settings"],
    ]);
  });

  it.each([
    ["an operator", operatorUser],
    ["a viewer", viewerUser],
  ])("shows %s no Files, Destinations, Schedules or Notifications link, and the role next to the name", async (_who, signedIn) => {
    installFakeFetch(signedInAs(signedIn));
    renderApp("/");

    const nav = await screen.findByRole("navigation", { name: "Main" });
    const labels = within(nav)
      .getAllByRole("link")
      .map((a) => a.textContent);
    expect(labels).not.toContain("Files");
    expect(labels).not.toContain("Destinations");
    expect(labels).not.toContain("Schedules");
    expect(labels).not.toContain("Notifications");
    expect(labels).toContain("Stacks");
    expect(labels).toContain("Settings");
    // Backups needs the operator role: a viewer's page would only say so.
    expect(labels.includes("Backups")).toBe(signedIn.role === "operator");
    expect(await screen.findByText(signedIn.username)).toHaveTextContent(`${signedIn.username}${signedIn.role}`);
  });

  it("offers a skip link first, which takes the focus past the menu to the page", async () => {
    installFakeFetch(signedInAs(adminUser));
    const { user } = renderApp("/");
    await screen.findByRole("navigation", { name: "Main" });

    await user.tab();
    const skip = screen.getByRole("link", { name: "Skip to content" });
    expect(skip).toHaveFocus();
    expect(skip).toHaveAttribute("href", "#content");
    expect(document.getElementById("content")).toContainElement(screen.getByRole("heading", { level: 1 }));
  });

  it("nudges a user who signed in with the one-time password to choose their own", async () => {
    installFakeFetch(signedInAs({ ...adminUser, password_change_due: true }));
    renderApp("/");

    const nudge = await screen.findByText(/one-time password printed at first start/);
    expect(within(nudge).getByRole("link", { name: "Settings" })).toHaveAttribute("href", "/settings");
  });

  it("navigates to a page and marks its link", async () => {
    installFakeFetch({ ...signedInAs(adminUser), "GET /api/agents": [] });
    const { user } = renderApp("/");

    await user.click(await screen.findByRole("link", { name: "Agents" }));

    expect(screen.getByRole("heading", { level: 1, name: "Agents" })).toBeInTheDocument();
    expect(await screen.findByText(/No agents yet/)).toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Agents" })).toHaveAttribute("aria-current", "page");
  });

  it("shows the signed-in user and signs out", async () => {
    document.cookie = "stackyard_csrf=c5rf";
    const fake = installFakeFetch({ ...signedInAs(adminUser), "POST /api/auth/logout": { provider_logout_url: null } });
    const { user } = renderApp("/");

    expect(await screen.findByText("alice")).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Sign out" }));

    expect(await screen.findByRole("button", { name: "Sign in" })).toBeInTheDocument();
    expect(screen.getByTestId("location")).toHaveTextContent("/login");
    const [logout] = fake.calls("POST", "/api/auth/logout");
    expect(logout?.headers.get("X-CSRF-Token")).toBe("c5rf");
    expect(leaveFor).not.toHaveBeenCalled();
  });

  it("signs out at the identity provider too when the sign-in began there", async () => {
    const url = "https://sso.example.com/logout?id_token_hint=x";
    installFakeFetch({ ...signedInAs(adminUser), "POST /api/auth/logout": { provider_logout_url: url } });
    const { user } = renderApp("/");
    await user.click(await screen.findByRole("button", { name: "Sign out" }));
    await waitFor(() => expect(leaveFor).toHaveBeenCalledWith(url));
  });

  it("re-reads the user when the server starts refusing, and sends them to set up a newly required two-factor", async () => {
    let due = false;
    const refused = () => json({ detail: "Set up two-factor sign-in first (Account): an admin requires it" }, { status: 403 });
    installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/auth/me": () => json({ ...adminUser, two_factor_due: due }),
      "GET /api/stacks": refused,
      "GET /api/stacks/updates": refused,
      "GET /api/auth/tokens": [],
      "GET /api/users": [],
      "GET /api/audit": { items: [], total: 0 },
    });
    const { user } = renderApp("/settings");
    expect(await screen.findByRole("heading", { name: "Users" })).toBeInTheDocument();

    // Later (an admin required it meanwhile): the next page's requests are refused.
    due = true;
    const later = Date.now() + 15_000; // the record is still fresh (60 s), a refusal re-checks after 10 s
    const now = vi.spyOn(Date, "now").mockImplementation(() => later);
    try {
      await user.click(screen.getByRole("link", { name: "Stacks" }));
      expect(await screen.findByText(/requires two-factor sign-in for your account/)).toBeInTheDocument();
      await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/settings"));
      expect(screen.getByRole("heading", { name: "Two-factor sign-in" })).toBeInTheDocument();
    } finally {
      now.mockRestore();
    }
  });

  it("sends a user whose two-factor is required but not set up to their account", async () => {
    installFakeFetch(signedInAs({ ...adminUser, two_factor_due: true }));
    renderApp("/stacks");
    expect(await screen.findByText(/requires two-factor sign-in for your account/)).toBeInTheDocument();
    await waitFor(() => expect(screen.getByTestId("location")).toHaveTextContent("/settings"));
    expect(screen.getByRole("heading", { name: "Two-factor sign-in" })).toBeInTheDocument();
    expect(screen.queryByRole("heading", { name: "Users" })).not.toBeInTheDocument();
  });
});

describe("narrow screens", () => {
  it("has a Menu button that opens the navigation and closes it on navigation and on Escape", async () => {
    installFakeFetch(signedInAs(adminUser));
    const { user } = renderApp("/");
    const menu = await screen.findByRole("button", { name: "Menu" });
    expect(menu).toHaveAttribute("aria-expanded", "false");
    const sidebar = document.getElementById(menu.getAttribute("aria-controls") ?? "");
    expect(sidebar).toContainElement(screen.getByRole("navigation", { name: "Main" }));

    await user.click(menu);
    expect(menu).toHaveAttribute("aria-expanded", "true");
    expect(menu.closest(".layout")).toHaveClass("menu-open");
    await user.click(screen.getByRole("link", { name: "Stacks" }));
    expect(menu).toHaveAttribute("aria-expanded", "false");

    await user.click(menu);
    await user.keyboard("{Escape}");
    expect(menu).toHaveAttribute("aria-expanded", "false");
    expect(menu).toHaveFocus();
  });
});
