import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { makeDiskReport, makePreview, makePruneReport } from "../../test/diskFixtures";
import { installFakeFetch, json } from "../../test/fakeFetch";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";

describe("prune", () => {
  it("previews with the safe defaults, removes exactly the preview's objects, and reports what it freed and left", async () => {
    const preview = makePreview();
    let pruned = false;
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/disk": makeDiskReport(),
      "GET /api/disk/prunes": () => json(pruned ? [makePruneReport()] : []),
      "POST /api/disk/prune/preview": preview,
      "POST /api/disk/prune": () => {
        pruned = true;
        return json(makePruneReport());
      },
    });
    const { user } = renderApp("/disk");

    await user.click(await screen.findByRole("button", { name: "Prune…" }));
    const dialog = screen.getByRole("dialog", { name: "Prune this host" });
    const images = within(dialog).getByRole("group", { name: "Images" });
    expect(within(images).getByRole("radio", { name: "Dangling (untagged) images" })).toBeChecked();
    expect(within(dialog).getByRole("checkbox", { name: "Stopped containers of no stack" })).toBeChecked();
    expect(within(dialog).getByRole("checkbox", { name: "Networks no container uses" })).toBeChecked();
    expect(within(dialog).getByRole("checkbox", { name: "Build cache no build uses" })).toBeChecked();
    expect(within(within(dialog).getByRole("group", { name: "Volumes" })).getByRole("radio", { name: "None" })).toBeChecked();
    expect(dialog).toHaveTextContent("Never taken, whatever is chosen: the named volumes of any stack");
    expect(dialog).toHaveTextContent("the images an update keeps for its rollback");
    expect(dialog).toHaveTextContent("stackyard.protect=true");

    await user.click(within(dialog).getByRole("button", { name: "Preview" }));
    const items = await within(dialog).findByRole("table", { name: "To remove" });
    expect(await fake.calls("POST", "/api/disk/prune/preview")[0]?.json()).toEqual({
      images: "dangling",
      containers: true,
      networks: true,
      build_cache: true,
      volumes: "none",
    });
    expect(within(items).getAllByRole("row")).toHaveLength(4);
    expect(within(items).getByRole("row", { name: /leftover/ })).toHaveTextContent("10.0 MB");
    const perKind = within(dialog).getByLabelText("Freed per kind");
    expect(perKind).toHaveTextContent("Images40.0 MB · 1 image");
    expect(perKind).toHaveTextContent("Containers10.0 MB · 1 container");
    expect(perKind).toHaveTextContent("Networks0 B · 1 network");
    expect(perKind).toHaveTextContent("Total50.0 MB");
    expect(perKind).not.toHaveTextContent("Volumes");
    expect(within(dialog).getByRole("list", { name: "Kept" })).toHaveTextContent("web_default: a network of the stack web");

    await user.click(within(dialog).getByRole("button", { name: "Remove these 3 objects" }));
    expect(await within(dialog).findByRole("status")).toHaveTextContent("Removed 2 objects: 50.0 MB freed.");
    expect(await fake.calls("POST", "/api/disk/prune")[0]?.json()).toEqual({
      options: preview.options,
      ids: [
        "image:sha256:3333333333333333333333333333333333333333333333333333333333333333",
        "container:c2",
        `network:${"6".repeat(64)}`,
      ],
    });
    expect(within(dialog).getByRole("list", { name: "Left" })).toHaveTextContent("loose-net: a container uses it now");
    // The page reads the disk and its prunes again.
    await waitFor(() => expect(screen.getByRole("list", { name: "Prunes of this host" })).toHaveTextContent("by alice"));
    expect(fake.calls("GET", "/api/disk").length).toBeGreaterThan(1);

    await user.click(within(dialog).getByRole("button", { name: "Close" }));
    expect(screen.queryByRole("dialog")).not.toBeInTheDocument();
  });

  it("sends the options chosen, goes back to them, and removes nothing when the preview lists nothing", async () => {
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/disk": makeDiskReport(),
      "GET /api/disk/prunes": [],
      "POST /api/disk/prune/preview": makePreview({ items: [], bytes: {}, total: 0, kept: [] }),
    });
    const { user } = renderApp("/disk");

    await user.click(await screen.findByRole("button", { name: "Prune…" }));
    const dialog = screen.getByRole("dialog", { name: "Prune this host" });
    await user.click(within(within(dialog).getByRole("group", { name: "Images" })).getByRole("radio", { name: "Every image no container uses" }));
    await user.click(within(dialog).getByRole("checkbox", { name: "Build cache no build uses" }));
    await user.click(within(within(dialog).getByRole("group", { name: "Volumes" })).getByRole("radio", { name: /Anonymous volumes/ }));
    await user.click(within(dialog).getByRole("button", { name: "Preview" }));

    expect(await within(dialog).findByText(/Nothing to remove/)).toBeInTheDocument();
    expect(await fake.calls("POST", "/api/disk/prune/preview")[0]?.json()).toEqual({
      images: "unused",
      containers: true,
      networks: true,
      build_cache: false,
      volumes: "anonymous",
    });
    expect(within(dialog).getByRole("button", { name: "Remove these 0 objects" })).toBeDisabled();
    await user.click(within(dialog).getByRole("button", { name: "Change the options" }));
    expect(within(within(dialog).getByRole("group", { name: "Images" })).getByRole("radio", { name: "Every image no container uses" })).toBeChecked();
    expect(fake.calls("POST", "/api/disk/prune")).toHaveLength(0);
  });
});
