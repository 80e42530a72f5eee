import { QueryClientProvider } from "@tanstack/react-query";
import { render, screen, waitFor, within } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { describe, expect, it } from "vitest";
import { createQueryClient } from "../../queryClient";
import { installFakeEventSource, openSource, sourcesOf } from "../../test/fakeEventSource";
import { installFakeFetch, json, noContent } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeRun, makeStackUpdate, makeSummary } from "../../test/stackFixtures";
import { DeployConsole } from "./DeployConsole";

const jsonRun = makeRun(
  { action: "update" },
  {
    mode: "json",
    percent: 41.6,
    bytes_done: 12_300_000,
    bytes_total: 40_000_000,
    layers_done: 3,
    layers_total: 5,
    images: [
      { id: "app", status: "Pulling", percent: 30.7, bytes_done: 12_300_000, bytes_total: 40_000_000, layers_done: 3, layers_total: 5 },
      { id: "db", status: "Pulled", percent: 100, bytes_done: 0, bytes_total: 0, layers_done: 0, layers_total: 0 },
    ],
    containers: [{ id: "Container web-app-1", status: "Created", done: false }],
    lines: [
      { id: "app", text: "app Pulling", level: "info" },
      { id: "a1b2c3", text: "a1b2c3 Downloading [=====>    ] 12.3MB/40MB", level: "info" },
      { id: null, text: "WARN the attribute version is obsolete", level: "warning" },
      { id: "db", text: "db Error pull access denied", level: "error" },
    ],
  },
);

/** The console on a page of `at` (its `?host=` names the host it follows). */
function renderConsole(stackId = "web", at = "/stacks/web") {
  const queryClient = createQueryClient({ retry: false });
  const result = render(
    <QueryClientProvider client={queryClient}>
      <MemoryRouter initialEntries={[at]}>
        <DeployConsole stackId={stackId} />
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return { ...result, queryClient };
}

describe("deploy console rendering", () => {
  it("draws a json-mode state: bar, per-image bars, counter and the output", async () => {
    installFakeEventSource();
    installFakeFetch({ "GET /api/stacks/web/run": jsonRun });
    renderConsole();

    const bar = await screen.findByRole("progressbar", { name: "Deploy progress" });
    expect(bar).toHaveAttribute("aria-valuenow", "42");
    expect(bar).toHaveAttribute("aria-valuemin", "0");
    expect(bar).toHaveAttribute("aria-valuemax", "100");
    expect(screen.getByText("42%")).toBeInTheDocument();
    expect(screen.getByRole("status")).toHaveTextContent("Running update…");

    const images = screen.getByRole("list", { name: "Images" });
    expect(within(images).getByRole("progressbar", { name: "app" })).toHaveAttribute("aria-valuenow", "31");
    expect(within(images).getByRole("progressbar", { name: "db" })).toHaveAttribute("aria-valuenow", "100");

    expect(screen.getByTestId("deploy-counter")).toHaveTextContent("12.3 MB of 40.0 MB · 3 of 5 layers");
    expect(screen.getByText("0 of 1 container")).toBeInTheDocument();

    const log = screen.getByRole("log", { name: "Output" });
    const lines = Array.from(log.children);
    expect(lines.map((l) => l.textContent)).toEqual([
      "app Pulling",
      "a1b2c3 Downloading [=====>    ] 12.3MB/40MB",
      "Warning: WARN the attribute version is obsolete",
      "Error: db Error pull access denied",
    ]);
    const errorLine = within(log).getByText("db Error pull access denied");
    expect(errorLine).toHaveClass("line-error");
    expect(errorLine).toHaveAttribute("data-level", "error");
    expect(within(log).getByText(/attribute version is obsolete/)).toHaveClass("line-warning");
    expect(within(log).getByText("app Pulling")).toHaveClass("line-info");
  });

  it("draws a restore's stage with its counter", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun(
        { action: "restore" },
        {
          mode: "transfer",
          percent: 25,
          bytes_done: 500_000_000,
          bytes_total: 2_000_000_000,
          layers_done: 1,
          layers_total: 3,
          stage: "Checking the archive (1 of 2)",
        },
      ),
    });
    renderConsole();

    const bar = await screen.findByRole("progressbar", { name: "Deploy progress" });
    expect(bar).toHaveAttribute("aria-valuenow", "25");
    expect(screen.getByTestId("deploy-counter")).toHaveTextContent(
      "Checking the archive (1 of 2): 500.0 MB of 2.0 GB · 1 of 3 volumes and folders",
    );
  });

  it("draws an indeterminate bar for plain text progress", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun(
        {},
        { mode: "text", percent: null, lines: [{ id: null, text: "Container web-app-1 Starting", level: "info" }] },
      ),
    });
    renderConsole();

    const bar = await screen.findByRole("progressbar", { name: "Deploy progress" });
    expect(bar).not.toHaveAttribute("aria-valuenow");
    expect(bar).toHaveClass("progress-indeterminate");
    expect(screen.getByText("Working…")).toBeInTheDocument();
    expect(screen.queryByText(/%$/)).not.toBeInTheDocument();
    expect(screen.queryByTestId("deploy-counter")).not.toBeInTheDocument();
    expect(screen.getByRole("log", { name: "Output" })).toHaveTextContent("Container web-app-1 Starting");
  });

  it("shows a failed run's errors as errors, not as progress", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun(
        { status: "failed", finished_at: "2025-03-01T10:01:00Z", exit_code: 1 },
        { percent: 70, errors: ["pull access denied for nope", "compose exited with status 1"] },
      ),
    });
    renderConsole();

    await waitFor(() =>
      expect(screen.getByRole("status")).toHaveTextContent(
        "start failed: pull access denied for nope; compose exited with status 1",
      ),
    );
    expect(screen.getByRole("status")).toHaveClass("error");
    expect(screen.getByRole("progressbar", { name: "Deploy progress" })).toHaveClass("tone-bad");
    // A finished run is not followed.
    expect(openSource()).toBeUndefined();
  });

  it("says an update that failed its health gate was rolled back, and why, with the service's logs", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun(
        { action: "update", status: "failed", finished_at: "2025-03-01T10:01:00Z", exit_code: 0, rollback: "done" },
        {
          percent: 100,
          errors: ["rolled back: app is unhealthy: the health check failed 3 times"],
          lines: [
            { id: null, text: "Rolling back: app is unhealthy", level: "warning" },
            { id: null, text: "  | nginx: [emerg] unknown directive", level: "info" },
            { id: null, text: "Rolled back: the previous images run again", level: "info" },
          ],
        },
      ),
    });
    renderConsole();

    await waitFor(() =>
      expect(screen.getByRole("status")).toHaveTextContent(
        "update rolled back: app is unhealthy: the health check failed 3 times. The previous images run again.",
      ),
    );
    expect(screen.getByRole("status")).toHaveClass("warn-text");
    expect(screen.getByRole("progressbar", { name: "Deploy progress" })).toHaveClass("tone-warn");
    expect(screen.getByRole("log", { name: "Output" })).toHaveTextContent("| nginx: [emerg] unknown directive");
  });

  it("says in red when the rollback failed too", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun(
        { action: "update", status: "failed", finished_at: "2025-03-01T10:01:00Z", exit_code: 1, rollback: "failed" },
        { percent: 100, errors: ["app is unhealthy; the previous images could not be started: no such image"] },
      ),
    });
    renderConsole();

    await waitFor(() =>
      expect(screen.getByRole("status")).toHaveTextContent(
        "update failed, and so did its rollback: app is unhealthy; the previous images could not be started",
      ),
    );
    expect(screen.getByRole("status")).toHaveClass("error");
    expect(screen.getByRole("progressbar", { name: "Deploy progress" })).toHaveClass("tone-bad");
  });

  it("shows a run that left out part of what was asked for as done in part", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun(
        { action: "restore", status: "partial", finished_at: "2025-03-01T10:01:00Z", exit_code: 0 },
        { percent: 100 },
      ),
    });
    renderConsole();

    await waitFor(() => expect(screen.getByRole("status")).toHaveTextContent("restore done in part"));
    expect(screen.getByRole("status")).toHaveClass("notice");
    expect(screen.getByRole("progressbar", { name: "Deploy progress" })).toHaveClass("tone-warn");
  });

  it("shows a run the service was killed in as interrupted", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun({ action: "backup", status: "interrupted", finished_at: null, exit_code: null }),
    });
    renderConsole();

    await waitFor(() => expect(screen.getByRole("status")).toHaveTextContent("backup interrupted: the service stopped"));
    expect(screen.getByRole("progressbar", { name: "Deploy progress" })).toHaveClass("tone-bad");
    expect(openSource()).toBeUndefined();
  });

  it("says so when the stack never ran anything", async () => {
    installFakeEventSource();
    installFakeFetch({ "GET /api/stacks/web/run": () => json({ detail: "No run" }, { status: 404 }) });
    renderConsole();

    expect(await screen.findByText("No action has run on this stack yet.")).toBeInTheDocument();
    expect(sourcesOf("/run/events")).toHaveLength(0);
  });
});

describe("deploy console following a run", () => {
  it("connects to a run in progress when the page opens and follows its states", async () => {
    installFakeEventSource();
    const fake = installFakeFetch({
      "GET /api/stacks/web/run": makeRun({}, { percent: 5 }),
      "POST /api/streams/:name/end": () => noContent(),
    });
    const { unmount } = renderConsole();

    const bar = await screen.findByRole("progressbar", { name: "Deploy progress" });
    expect(bar).toHaveAttribute("aria-valuenow", "5");
    await waitFor(() => expect(openSource()).toBeDefined());
    const source = openSource();
    expect(source?.url).toBe("/api/stacks/web/run/events");

    await source?.emit("state", makeRun({}, { percent: 64.4, lines: [{ id: "Container web-app-1", text: "Container web-app-1 Starting", level: "info" }] }));
    expect(bar).toHaveAttribute("aria-valuenow", "64");
    expect(screen.getByText("64%")).toBeInTheDocument();
    expect(screen.getByRole("log", { name: "Output" })).toHaveTextContent("Container web-app-1 Starting");

    // The same line is updated in place, not appended.
    await source?.emit("state", makeRun({}, { percent: 80, lines: [{ id: "Container web-app-1", text: "Container web-app-1 Started", level: "info" }] }));
    expect(screen.getByRole("log", { name: "Output" }).children).toHaveLength(1);
    expect(screen.getByRole("log", { name: "Output" })).toHaveTextContent("Container web-app-1 Started");

    // Leaving asks the server to end the stream (a cut one is a failed request to the
    // browser), and closes it once the server has ended the answer.
    unmount();
    await waitFor(() => expect(fake.calls("POST", `/api/streams/${source?.name}/end`)).toHaveLength(1));
    expect(source?.closed).toBe(false);
    await source?.complete();
    expect(source?.closed).toBe(true);
    expect(sourcesOf("/run/events")).toHaveLength(1);
  });

  it("follows a run on an agent through the central's proxy", async () => {
    installFakeEventSource();
    const fake = installFakeFetch({ "GET /api/agents/3/stacks/web/run": makeRun({}, { percent: 5 }) });
    renderConsole("web", "/stacks/web?host=3");

    await screen.findByRole("progressbar", { name: "Deploy progress" });
    await waitFor(() => expect(openSource()?.url).toBe("/api/agents/3/stacks/web/run/events"));
    expect(fake.calls("GET", "/api/stacks/web/run")).toHaveLength(0);
  });

  it("closes the stream at the end of the run and refreshes the stacks and the update summary", async () => {
    installFakeEventSource();
    let stackReads = 0;
    let updateReads = 0;
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/stacks/web": () => {
        stackReads += 1;
        return json(makeDetail({ state: stackReads > 1 ? "running" : "stopped", busy: stackReads > 1 ? null : "start" }));
      },
      "GET /api/stacks/updates": () => {
        updateReads += 1;
        return json(makeSummary([makeStackUpdate()]));
      },
      "GET /api/stacks/web/run": makeRun({}, { percent: 10 }),
    });
    renderApp("/stacks/web");

    await screen.findByRole("progressbar", { name: "Deploy progress" });
    await waitFor(() => expect(openSource()).toBeDefined());
    const source = openSource();
    const readsBefore = { stack: stackReads, updates: updateReads };

    await source?.emit(
      "state",
      makeRun({ status: "succeeded", finished_at: "2025-03-01T10:00:30Z", exit_code: 0 }, { percent: 100 }),
    );
    // Closed once the server has ended its answer (`end` follows the final state).
    await source?.complete();
    expect(source?.closed).toBe(true);
    expect(screen.getByRole("progressbar", { name: "Deploy progress" })).toHaveAttribute("aria-valuenow", "100");
    expect(screen.getByRole("region", { name: "Deploy web" })).toHaveTextContent("start succeeded");

    await waitFor(() => expect(stackReads).toBeGreaterThan(readsBefore.stack));
    await waitFor(() => expect(updateReads).toBeGreaterThan(readsBefore.updates));
    expect(await screen.findByText("Running", { selector: ".state" })).toBeInTheDocument();
    // Nothing reconnects once the run is over.
    expect(openSource()).toBeUndefined();
    expect(fake.calls("GET", "/api/stacks/web/run")).toHaveLength(1);
  });

  it("stops on `end` even without a final state, and reads the run again", async () => {
    installFakeEventSource();
    let runReads = 0;
    installFakeFetch({
      "GET /api/stacks/web/run": () => {
        runReads += 1;
        return json(
          runReads === 1
            ? makeRun({}, { percent: 10 })
            : makeRun({ status: "succeeded", finished_at: "2025-03-01T10:00:30Z", exit_code: 0 }, { percent: 100 }),
        );
      },
    });
    renderConsole();

    await waitFor(() => expect(openSource()).toBeDefined());
    const source = openSource();
    await source?.emit("end");
    await source?.complete();
    expect(source?.closed).toBe(true);
    expect(await screen.findByText("start succeeded")).toBeInTheDocument();
    expect(runReads).toBe(2);
    expect(openSource()).toBeUndefined();
  });

  it("keeps the stream when the connection drops (the browser reconnects), stops when refused", async () => {
    installFakeEventSource();
    installFakeFetch({ "GET /api/stacks/web/run": makeRun({}, { percent: 10 }) });
    renderConsole();

    await waitFor(() => expect(openSource()).toBeDefined());
    const source = openSource();
    await source?.fail(false);
    expect(source?.readyState).toBe(0);
    await source?.emit("state", makeRun({}, { percent: 20 }));
    expect(screen.getByRole("progressbar", { name: "Deploy progress" })).toHaveAttribute("aria-valuenow", "20");

    await source?.fail(true);
    expect(source?.closed).toBe(true);
  });
});

describe("what a finished run says", () => {
  it("says a backup's outcome, and that its output is for operators and admins when left out", async () => {
    installFakeEventSource();
    installFakeFetch({
      "GET /api/stacks/web/run": makeRun(
        {
          action: "backup",
          status: "succeeded",
          finished_at: "2025-03-01T10:00:30Z",
          exit_code: 0,
          summary: "archive web--nas--20250301T100000Z.tar (4.1 kB)",
          output_hidden: true,
        },
        { mode: "transfer", percent: 100 },
      ),
    });
    renderConsole();

    await waitFor(() =>
      expect(screen.getByRole("status")).toHaveTextContent(
        "backup succeeded: archive web--nas--20250301T100000Z.tar (4.1 kB)",
      ),
    );
    const output = screen.getByRole("log", { name: "Output" });
    expect(output).toHaveTextContent("Its output is shown to operators and admins");
    expect(output).not.toHaveTextContent("No output");
  });
});
