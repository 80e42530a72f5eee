import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import type { LogLine } from "../../api/types";
import { openSource, sourcesOf } from "../../test/fakeEventSource";
import { installFakeFetch } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { makeDetail, makeRun, makeSummary } from "../../test/stackFixtures";

function routes(user = adminUser) {
  return {
    ...signedInAs(user),
    "GET /api/stacks/web": makeDetail(),
    "GET /api/stacks/updates": makeSummary([]),
    "GET /api/stacks/web/run": makeRun({ status: "succeeded" }),
    "GET /api/usage": { containers: [], stacks: {}, total: emptyTotals() },
  };
}

function emptyTotals() {
  return { containers: 0, cpu_percent: 0, memory_used: 0, network_rx: 0, network_tx: 0, block_read: 0, block_write: 0 };
}

let clock = 0;
function line(text: string, overrides: Partial<LogLine> = {}): LogLine {
  clock += 1;
  return {
    time: `2026-11-23T15:00:${String(clock % 60).padStart(2, "0")}.5Z`,
    container: "web-app-1",
    service: "app",
    stream: "stdout",
    text,
    ...overrides,
  };
}

async function logView() {
  const card = await screen.findByRole("region", { name: "Logs" });
  await waitFor(() => expect(openSource("/logs")).toBeDefined());
  return { card, view: within(card).getByRole("log", { name: "Log lines" }) };
}

describe("logs on the stack page", () => {
  it("shows the tail then new lines, stderr marked, colours rendered, the container when several", async () => {
    installFakeFetch(routes());
    renderApp("/stacks/web");
    const { card, view } = await logView();
    const source = openSource("/logs");
    expect(source?.url).toBe("/api/stacks/web/logs");

    await source?.emit("message", { lines: [line("started"), line("\u001b[31mfailed\u001b[0m", { stream: "stderr" })], end: false });
    await waitFor(() => expect(view).toHaveTextContent("started"));
    const failed = within(view).getByText("failed");
    expect(failed).toHaveClass("ansi-red-fg");
    expect(failed.closest(".log-line")).toHaveClass("log-stderr");
    expect(view).not.toHaveTextContent("web-app-1"); // one container: no names

    await source?.emit("message", { lines: [line("from the db", { container: "web-db-1", service: "db" })], end: false });
    // Named without the stack's prefix ("db-1", as compose's own log says), the whole name on hover.
    await waitFor(() => expect(within(view).getByTitle("web-db-1")).toHaveTextContent(/^db-1$/));
    expect(within(view).getAllByTitle("web-app-1")[0]).toHaveTextContent(/^app-1$/);
    expect(within(card).getByRole("status")).toHaveTextContent("Following · 3 lines");
  });

  it("finds lines, pauses and resumes without losing any", async () => {
    installFakeFetch(routes());
    const { user } = renderApp("/stacks/web");
    const { card, view } = await logView();
    const source = openSource("/logs");
    await source?.emit("message", { lines: [line("GET /health 200"), line("POST /login 500"), line("GET / 200")], end: false });
    await waitFor(() => expect(view).toHaveTextContent("GET / 200"));

    await user.type(within(card).getByRole("searchbox", { name: "Search" }), "login");
    expect(view).toHaveTextContent("POST /login 500");
    expect(view).not.toHaveTextContent("GET /health");
    expect(within(card).getByRole("status")).toHaveTextContent("1 of 3 lines match");
    await user.clear(within(card).getByRole("searchbox", { name: "Search" }));

    await user.click(within(card).getByRole("button", { name: "Pause" }));
    await source?.emit("message", { lines: [line("while paused 1"), line("while paused 2")], end: false });
    await waitFor(() => expect(within(card).getByRole("status")).toHaveTextContent("paused, 2 new lines waiting"));
    expect(view).not.toHaveTextContent("while paused");
    await user.click(within(card).getByRole("button", { name: "Resume" }));
    await waitFor(() => expect(view).toHaveTextContent("while paused 2"));
    expect(view).toHaveTextContent("while paused 1");
  });

  it("follows one service, downloads its log, and reconnects after a break", async () => {
    installFakeFetch(routes());
    const { user } = renderApp("/stacks/web");
    const { card } = await logView();
    await user.selectOptions(within(card).getByRole("combobox", { name: "Containers" }), "service:app");
    await waitFor(() => expect(openSource("/logs")?.url).toBe("/api/stacks/web/logs?service=app"));
    expect(sourcesOf("/logs").filter((s) => !s.closed)).toHaveLength(1); // the old one closed
    expect(within(card).getByRole("link", { name: "Download log" })).toHaveAttribute(
      "href",
      "/api/stacks/web/logs/download?service=app",
    );

    await openSource("/logs")?.fail(true);
    expect(within(card).getByRole("status")).toHaveTextContent("Disconnected");
    await user.click(within(card).getByRole("button", { name: "Reconnect" }));
    await waitFor(() => expect(openSource("/logs")).toBeDefined());
    expect(sourcesOf("/logs")).toHaveLength(3);
  });

  it("is there for operators, not for viewers", async () => {
    installFakeFetch(routes(operatorUser));
    const first = renderApp("/stacks/web");
    expect(await screen.findByRole("region", { name: "Logs" })).toBeInTheDocument();
    first.unmount();

    installFakeFetch(routes(viewerUser));
    renderApp("/stacks/web");
    await screen.findByRole("heading", { level: 1, name: "web" });
    expect(screen.queryByRole("region", { name: "Logs" })).not.toBeInTheDocument();
    expect(sourcesOf("/logs").filter((s) => !s.closed)).toHaveLength(0);
  });
});
