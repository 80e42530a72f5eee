import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { UpdatePolicy } from "../../api/types";
import { makeAgent } from "../../test/agentFixtures";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makePolicy } from "../../test/stackFixtures";

function adminRoutes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/auth/tokens": [],
    "GET /api/users": [],
    "GET /api/registries": [],
    "GET /api/audit": { items: [], total: 0 },
    ...extra,
  };
}

describe("the default update policy", () => {
  it("shows this host's default to an admin and saves a change", async () => {
    let policy = makePolicy();
    const fake = installFakeFetch(
      adminRoutes({
        "GET /api/stacks/update-policy": () => json(policy),
        "PUT /api/stacks/update-policy": async (request) => {
          const sent = (await request.json()) as UpdatePolicy;
          // The server keeps a window in its own words.
          policy = { ...sent, window: sent.window === "weekly" ? "0 0 * * 0" : sent.window };
          return noContent();
        },
      }),
    );
    const { user } = renderApp("/settings");

    const region = await screen.findByRole("region", { name: "Default update policy" });
    expect(region).toHaveTextContent("every stack on this host");
    const form = await within(region).findByRole("form", { name: "Default update policy" });
    expect(within(form).getByLabelText("Health gate timeout (seconds)")).toHaveValue(120);
    await user.selectOptions(within(form).getByLabelText("Mode"), "off");
    const timeout = within(form).getByLabelText("Health gate timeout (seconds)");
    await user.clear(timeout);
    await user.type(timeout, "300");
    const length = within(form).getByLabelText("Window length (minutes)");
    await user.clear(length);
    await user.type(length, "60");
    await user.type(within(form).getByLabelText("Maintenance window (cron)"), "weekly");
    await user.click(within(form).getByRole("button", { name: "Save default policy" }));

    expect(await within(form).findByRole("status")).toHaveTextContent("Default policy saved.");
    expect(await fake.calls("PUT", "/api/stacks/update-policy")[0]?.json()).toEqual({
      ...makePolicy(),
      mode: "off",
      health_timeout: 300,
      window: "weekly",
      window_minutes: 60,
    });
    await waitFor(() => expect(fake.calls("GET", "/api/stacks/update-policy").length).toBeGreaterThanOrEqual(2));
    // The form shows the policy as the server keeps it.
    await waitFor(() => expect(within(form).getByLabelText("Maintenance window (cron)")).toHaveValue("0 0 * * 0"));
    expect(within(form).getByLabelText("Mode")).toHaveValue("off");
  });

  it("shows the server's refusal", async () => {
    installFakeFetch(
      adminRoutes({
        "GET /api/stacks/update-policy": makePolicy(),
        "PUT /api/stacks/update-policy": () =>
          json({ detail: "Invalid request: timezone: Value error, unknown time zone 'Mars/Base'" }, { status: 422 }),
      }),
    );
    const { user } = renderApp("/settings");

    const form = await screen.findByRole("form", { name: "Default update policy" });
    const zone = within(form).getByLabelText("Time zone");
    await user.clear(zone);
    await user.type(zone, "Mars/Base");
    await user.click(within(form).getByRole("button", { name: "Save default policy" }));

    expect(await within(form).findByRole("alert")).toHaveTextContent("unknown time zone 'Mars/Base'");
    expect(zone).toHaveValue("Mars/Base");
  });

  it("is the chosen agent's on ?host=", async () => {
    const fake = installFakeFetch(
      adminRoutes({
        "GET /api/agents": [makeAgent({ id: 3, name: "nas" })],
        "GET /api/agents/3/stacks/update-policy": makePolicy({ mode: "auto" }),
        "PUT /api/agents/3/stacks/update-policy": () => noContent(),
      }),
    );
    const { user } = renderApp("/settings?host=3");

    const region = await screen.findByRole("region", { name: "Default update policy" });
    await waitFor(() => expect(region).toHaveTextContent("every stack on nas"));
    const form = await within(region).findByRole("form", { name: "Default update policy" });
    expect(within(form).getByLabelText("Mode")).toHaveValue("auto");
    await user.click(within(form).getByRole("button", { name: "Save default policy" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/agents/3/stacks/update-policy")).toHaveLength(1));
    expect(fake.calls("PUT", "/api/stacks/update-policy")).toHaveLength(0);
  });
});

describe("the maintenance window", () => {
  it("shows the next windows of the cron as the server reads it, start to end, in the policy's zone", async () => {
    const fake = installFakeFetch(
      adminRoutes({
        "GET /api/stacks/update-policy": makePolicy({ timezone: "UTC" }),
        "GET /api/timetable": {
          cron: "0 3 * * *",
          next: ["2026-11-24T03:00:00Z", "2026-11-25T03:00:00Z", "2026-11-26T03:00:00Z"],
        },
      }),
    );
    const { user } = renderApp("/settings");
    const form = await screen.findByRole("form", { name: "Default update policy" });
    expect(within(form).getByText("No window: the auto-update applies an update at any time.")).toBeInTheDocument();
    await user.type(within(form).getByLabelText("Maintenance window (cron)"), "daily");

    const windows = await within(form).findByRole("list", { name: "Next maintenance windows" });
    const items = within(windows).getAllByRole("listitem").map((li) => li.textContent);
    expect(items).toHaveLength(3);
    expect(items[0]).toMatch(/2026-11-24 03:00 – 05:00$/); // 120 minutes each
    expect(within(form).getByText("0 3 * * *")).toBeInTheDocument();
    const asked = new URL(fake.calls("GET", "/api/timetable").at(-1)?.url ?? "").searchParams;
    expect([asked.get("cron"), asked.get("timezone")]).toEqual(["daily", "UTC"]);
  });
});
