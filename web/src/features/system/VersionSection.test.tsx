import { act, screen, waitFor, within } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import type { Health, UpdateStarted } from "../../api/types";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { adminUser, health, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeLastUpdate, makeUpdateStatus, NOT_IN_CONTAINER, notSupported, updateAvailable } from "../../test/systemFixtures";
import { page } from "./reload";

const started: UpdateStarted = { from_version: "0.1.0", to_version: "0.2.0", helper: "stackyard-self-update-1" };

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/auth/tokens": [],
    "GET /api/users": [],
    "GET /api/registries": [],
    "GET /api/audit": { items: [], total: 0 },
    "GET /api/system/update": updateAvailable(),
    ...extra,
  };
}

async function versionSection(): Promise<HTMLElement> {
  return screen.findByRole("region", { name: "Stackyard version" });
}

describe("the Stackyard version in Settings", () => {
  it("shows the running version, the latest release and, for admins, the update", async () => {
    installFakeFetch(routes());
    renderApp("/settings");

    const section = await versionSection();
    expect(await within(section).findByTestId("running-version")).toHaveTextContent("0.1.0");
    expect(section).toHaveTextContent("Latest release0.2.0 checked");
    expect(section).toHaveTextContent("registry.lan:5000/stackyard");
    expect(within(section).getByText("Update available: 0.2.0")).toBeInTheDocument();
    expect(within(section).getByRole("button", { name: "Update to 0.2.0" })).toBeInTheDocument();
  });

  it("says it is up to date", async () => {
    installFakeFetch(routes({ "GET /api/system/update": makeUpdateStatus() }));
    renderApp("/settings");

    const section = await versionSection();
    expect(await within(section).findByText("Up to date")).toBeInTheDocument();
    expect(within(section).queryByRole("button", { name: /Update to/ })).not.toBeInTheDocument();
  });

  it("gives the reason when this installation cannot update itself, without an Update button", async () => {
    installFakeFetch(routes({ "GET /api/system/update": notSupported() }));
    renderApp("/settings");

    const section = await versionSection();
    expect(await within(section).findByRole("note")).toHaveTextContent(`Self-update is not available here: ${NOT_IN_CONTAINER}`);
    expect(within(section).getByTestId("running-version")).toHaveTextContent("0.1.0");
    expect(within(section).queryByRole("button")).not.toBeInTheDocument();
  });

  it("offers no Update button to users who are not admins", async () => {
    installFakeFetch({ ...routes(), ...signedInAs(viewerUser), "GET /api/system/update": updateAvailable() });
    renderApp("/settings");

    const section = await versionSection();
    expect(await within(section).findByText("Update available: 0.2.0")).toBeInTheDocument();
    expect(within(section).getByText("An admin can update Stackyard here.")).toBeInTheDocument();
    expect(within(section).queryByRole("button", { name: /Update to/ })).not.toBeInTheDocument();
  });

  it("checks now: asks the server for a fresh answer", async () => {
    const fake = installFakeFetch(
      routes({
        "GET /api/system/update": (request: Request) =>
          json(new URL(request.url).searchParams.get("fresh") === "true" ? updateAvailable({ latest_version: "0.3.0" }) : makeUpdateStatus()),
      }),
    );
    const { user } = renderApp("/settings");

    const section = await versionSection();
    await within(section).findByText("Up to date");
    await user.click(within(section).getByRole("button", { name: "Check now" }));

    expect(await within(section).findByText("Update available: 0.3.0")).toBeInTheDocument();
    const fresh = fake.calls("GET", "/api/system/update").filter((r) => new URL(r.url).searchParams.get("fresh") === "true");
    expect(fresh).toHaveLength(1);
  });

  it("shows the last update's outcome, and its output when it failed", async () => {
    installFakeFetch(
      routes({
        "GET /api/system/update": makeUpdateStatus({
          last_update: makeLastUpdate({ status: "failed", from_version: "0.1.0", to_version: "0.2.0", output: "Error: pull access denied" }),
        }),
      }),
    );
    renderApp("/settings");

    const section = await versionSection();
    expect(await within(section).findByText(/Last update: 0\.1\.0 → 0\.2\.0 failed/)).toBeInTheDocument();
    expect(within(section).getByLabelText("Output of the last update")).toHaveTextContent("Error: pull access denied");
  });

  it("says beside the Update button that the offered release was rolled back, when and why", async () => {
    const rolledBack = makeLastUpdate({
      status: "rolled_back",
      from_version: "0.1.0",
      to_version: "0.2.0",
      finished_at: "2025-03-01T10:00:00Z",
      why: "the new release is not healthy: it exited (status 3)",
    });
    installFakeFetch(routes({ "GET /api/system/update": updateAvailable({ last_update: rolledBack }) }));
    renderApp("/settings");

    const section = await versionSection();
    const offer = (await within(section).findByText("Update available: 0.2.0")).closest(".update-offer");
    const said = within(offer as HTMLElement).getByTestId("offered-before");
    expect(said).toHaveTextContent(
      /^0\.2\.0 was rolled back on .+: the new release is not healthy: it exited \(status 3\)\. Updating tries it again\.$/,
    );
    expect(within(said).getByText(/2025|Mar/)).toHaveAttribute("datetime", "2025-03-01T10:00:00Z");
    expect(within(offer as HTMLElement).getByRole("button", { name: "Update to 0.2.0" })).toBeInTheDocument();
  });

  it("says nothing beside the Update button of a release that was never tried", async () => {
    installFakeFetch(routes({ "GET /api/system/update": updateAvailable({ last_update: makeLastUpdate() }) }));
    renderApp("/settings");

    const section = await versionSection();
    await within(section).findByText("Update available: 0.2.0");
    expect(within(section).queryByTestId("offered-before")).not.toBeInTheDocument();
  });

  it("shows a succeeded last update without its output", async () => {
    installFakeFetch(routes({ "GET /api/system/update": makeUpdateStatus({ last_update: makeLastUpdate({ output: "all fine" }) }) }));
    renderApp("/settings");

    const section = await versionSection();
    expect(await within(section).findByText(/Last update: 0\.0\.9 → 0\.1\.0 succeeded/)).toBeInTheDocument();
    expect(within(section).queryByLabelText("Output of the last update")).not.toBeInTheDocument();
  });

  it.each([
    [400, "The service was not started by docker compose (its container has no com.docker.compose.project label)"],
    [409, "Version 0.1.0 is the latest release (0.1.0)"],
    [503, "The new image registry.lan:5000/stackyard:0.2.0 could not be pulled; nothing was changed: timeout"],
  ])("shows the server's %i refusal and reads the status again", async (status, detail) => {
    const fake = installFakeFetch(routes({ "POST /api/system/update": () => json({ detail }, { status }) }));
    const { user } = renderApp("/settings");

    const section = await versionSection();
    await user.click(await within(section).findByRole("button", { name: "Update to 0.2.0" }));
    await user.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Update now" }));

    expect(await within(section).findByRole("alert")).toHaveTextContent(detail);
    expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument();
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
    await waitFor(() => expect(fake.calls("GET", "/api/system/update").length).toBeGreaterThanOrEqual(2));
  });
});

describe("updating Stackyard", () => {
  let server: "old" | "down" | "new";
  let reloadPage: MockInstance<() => void>;

  beforeEach(() => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    reloadPage = vi.spyOn(page, "reload").mockImplementation(() => {});
    server = "old";
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  function updateRoutes(extra: Routes = {}): Routes {
    return routes({
      "POST /api/system/update": () => json(started, { status: 202 }),
      "GET /api/health": () => {
        if (server === "down") return Promise.reject(new TypeError("Failed to fetch"));
        const answer: Health = { ...health, version: server === "new" ? "0.2.0" : "0.1.0" };
        return json(answer);
      },
      ...extra,
    });
  }

  async function startUpdate() {
    const { user } = renderApp("/settings", { advanceTimers: vi.advanceTimersByTime });
    const section = await versionSection();
    await user.click(await within(section).findByRole("button", { name: "Update to 0.2.0" }));
    const confirm = screen.getByRole("alertdialog", { name: "Update Stackyard to 0.2.0?" });
    expect(confirm).toHaveTextContent("restarts on it: the service is unavailable for a few seconds");
    await user.click(within(confirm).getByRole("button", { name: "Update now" }));
    return screen.findByRole("dialog", { name: "Updating Stackyard to 0.2.0" });
  }

  async function seconds(n: number) {
    await act(() => vi.advanceTimersByTimeAsync(n * 1000));
  }

  it("polls /api/health every second through the restart and reloads when the new version answers", async () => {
    const fake = installFakeFetch(updateRoutes());
    const dialog = await startUpdate();

    expect(within(dialog).getByRole("status")).toHaveTextContent("Updating to 0.2.0…");
    expect(fake.calls("POST", "/api/system/update")).toHaveLength(1);
    await seconds(2);
    expect(dialog).toHaveTextContent("Version 0.1.0 still answers");

    server = "down";
    const before = fake.calls("GET", "/api/health").length;
    await seconds(5);
    expect(fake.calls("GET", "/api/health").length - before).toBeGreaterThanOrEqual(4);
    expect(dialog).toHaveTextContent("Stackyard is restarting");
    expect(within(dialog).getByRole("status")).toHaveTextContent("Updating to 0.2.0…");
    expect(reloadPage).not.toHaveBeenCalled();

    server = "new";
    await seconds(1);
    await waitFor(() => expect(reloadPage).toHaveBeenCalledTimes(1));
    expect(within(dialog).getByRole("status")).toHaveTextContent("Version 0.2.0 answers: reloading…");
    // Nothing more is read once it answered.
    const after = fake.calls("GET", "/api/health").length;
    await seconds(3);
    expect(fake.calls("GET", "/api/health")).toHaveLength(after);
  });

  it("gives up after 3 minutes with a clear message", async () => {
    const fake = installFakeFetch(updateRoutes());
    const dialog = await startUpdate();
    server = "down";

    await seconds(170);
    expect(within(dialog).queryByRole("alert")).not.toBeInTheDocument();
    await seconds(15);

    expect(await within(dialog).findByRole("alert")).toHaveTextContent(
      "Stackyard did not answer with version 0.2.0 within 3 minutes: it does not answer.",
    );
    expect(reloadPage).not.toHaveBeenCalled();
    const polls = fake.calls("GET", "/api/health").length;
    await seconds(5);
    expect(fake.calls("GET", "/api/health")).toHaveLength(polls);

    server = "old";
    act(() => {
      within(dialog).getByRole("button", { name: "Close" }).click();
    });
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
  });

  it.each([
    {
      status: "failed" as const,
      why: "docker compose up failed",
      output: "compose up: port 8080 is already allocated",
      said: "The update to 0.2.0 failed (docker compose up failed): it still runs 0.1.0.",
    },
    {
      status: "rolled_back" as const,
      why: "the new release is not healthy: it exited (status 3)",
      output: "The new release is not healthy: it exited (status 3)",
      said: "The update to 0.2.0 was rolled back (the new release is not healthy: it exited (status 3)): it runs 0.1.0 again.",
    },
  ])("stops and says so when the update helper left $status while the old version answers", async ({ status, why, output, said }) => {
    let failed = false;
    installFakeFetch(
      updateRoutes({
        "GET /api/system/update": () =>
          json(
            failed
              ? updateAvailable({
                  last_update: makeLastUpdate({ status, why, from_version: "0.1.0", to_version: "0.2.0", output }),
                })
              : updateAvailable(),
          ),
      }),
    );
    const dialog = await startUpdate();
    failed = true;

    await seconds(6);

    expect(await within(dialog).findByRole("alert")).toHaveTextContent(said);
    expect(dialog).toHaveTextContent(output);
    expect(reloadPage).not.toHaveBeenCalled();
  });
});

describe("the update hint in the sidebar", () => {
  it("says a newer release is out, linking to Settings", async () => {
    installFakeFetch({ ...signedInAs(viewerUser), "GET /api/system/update": updateAvailable() });
    renderApp("/");

    const hint = await screen.findByRole("link", { name: "Update available: 0.2.0" });
    expect(hint).toHaveAttribute("href", "/settings#version");
    expect(screen.getByTestId("app-version").parentElement).toContainElement(hint);
  });

  it("is not shown when up to date or when self-update is not supported", async () => {
    installFakeFetch(signedInAs(adminUser));
    renderApp("/");

    await screen.findByTestId("app-version");
    await act(() => new Promise((resolve) => setTimeout(resolve, 20)));
    expect(screen.queryByRole("link", { name: /Update available/ })).not.toBeInTheDocument();
  });
});
