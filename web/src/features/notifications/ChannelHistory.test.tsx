import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { formatDateTime } from "../../components/format";
import { installFakeFetch, type Routes } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { catalogue, hook, images, makeDelivery } from "../../test/notificationFixtures";
import { renderApp } from "../../test/renderApp";
import { deliveryStatus, messageSizes } from "./ChannelHistory";

/** Three events gone out in one digest, one on its own that failed, one still waiting. */
const deliveries = [
  makeDelivery({ id: 5, event: "disk_full", severity: "warning", host: "nas", stack: null, text: "/ is 97% full", status: "pending", attempts: 2, sent_at: null, error: "Answered 502: bad gateway", at: "2026-11-23T10:00:00Z" }),
  makeDelivery({ id: 4, event: "container_unhealthy", ended: true, text: "web-app-1 is healthy again", message: "m2", at: "2026-11-23T09:00:00Z" }),
  makeDelivery({ id: 3, event: "container_unhealthy", text: "web-app-1 is unhealthy", message: "m1", at: "2026-11-23T08:02:00Z" }),
  makeDelivery({ id: 2, event: "backup_failed", text: "Backup of web failed: disk full", message: "m1", at: "2026-11-23T08:01:00Z" }),
  makeDelivery({ id: 1, event: "update_failed", text: "Pull failed", message: "m1", status: "failed", attempts: 8, sent_at: null, error: "Answered 500: receiver says no", at: "2026-11-23T08:00:00Z" }),
];

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/notifications/catalogue": catalogue,
    "GET /api/notifications/channels": [hook],
    "GET /api/notifications/rules": [images],
    "GET /api/agents": [],
    // Newest first, as the server answers (shuffled here: the dialog orders them).
    "GET /api/notifications/channels/1/deliveries": [deliveries[2], deliveries[0], deliveries[4], deliveries[1], deliveries[3]],
    ...extra,
  };
}

describe("a channel's history", () => {
  it("lists its last deliveries newest first: event, host, stack, text, when, how it went", async () => {
    const fake = installFakeFetch(routes());
    const { user } = renderApp("/notifications");
    await user.click(await screen.findByRole("button", { name: "History of ops hook" }));
    const dialog = screen.getByRole("dialog", { name: "History of ops hook" });
    const table = await within(dialog).findByRole("table", { name: "History of ops hook" });
    const rows = within(table).getAllByRole("row").slice(1);
    expect(rows.map((row) => within(row).getAllByRole("cell")[0]?.textContent)).toEqual([
      "Disk almost fullWarning",
      "Resolved: Container unhealthyCritical",
      "Container unhealthyCritical",
      "Backup failedCritical",
      "Update failedCritical",
    ]);
    const [waiting, resolved, first, , failed] = rows;
    expect(waiting).toHaveTextContent("nas");
    expect(waiting).toHaveTextContent("/ is 97% full");
    expect(waiting).toHaveTextContent(formatDateTime("2026-11-23T10:00:00Z"));
    expect(waiting).toHaveTextContent("Pending (2 attempts so far)Answered 502: bad gateway");
    expect(waiting).not.toHaveTextContent("digest");
    // One message of its own: no digest.
    expect(resolved).toHaveTextContent("Sent");
    expect(resolved).not.toHaveTextContent("digest");
    // Three events in one message.
    expect(first).toHaveTextContent("web");
    expect(first).toHaveTextContent("in a digest of 3");
    expect(failed).toHaveTextContent("Failed after 8 attempts");
    expect(failed).toHaveTextContent("in a digest of 3");
    expect(failed).toHaveTextContent("Answered 500: receiver says no");

    const asked = new URL(fake.calls("GET", "/api/notifications/channels/1/deliveries")[0]?.url ?? "");
    expect(asked.searchParams.get("limit")).toBe("50");

    await user.click(within(dialog).getByRole("button", { name: "Close" }));
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
  });

  it("says when nothing was sent yet", async () => {
    installFakeFetch(routes({ "GET /api/notifications/channels/1/deliveries": [] }));
    const { user } = renderApp("/notifications");
    await user.click(await screen.findByRole("button", { name: "History of ops hook" }));
    expect(await screen.findByText("Nothing was sent to it yet (tests are not kept here).")).toBeInTheDocument();
  });

  it("counts a digest's deliveries by their shared message, and words each status", () => {
    expect(messageSizes(deliveries)).toEqual(new Map([["m1", 3], ["m2", 1]]));
    expect(deliveryStatus(makeDelivery({ status: "sent", attempts: 3 }))).toBe("Sent (3 attempts)");
    expect(deliveryStatus(makeDelivery({ status: "pending", attempts: 0 }))).toBe("Pending");
    expect(deliveryStatus(makeDelivery({ status: "failed", attempts: 1 }))).toBe("Failed after 1 attempt");
  });
});
