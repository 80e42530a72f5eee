import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { formatBytes } from "../../components/format";
import { ALL_CAPABILITIES, makeAgent } from "../../test/agentFixtures";
import { makeDiskReport, makeDiskSummary, makePruneReport } from "../../test/diskFixtures";
import { installFakeFetch, json, noContent, type Routes } from "../../test/fakeFetch";
import { adminUser, operatorUser, signedInAs, viewerUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";

const report = makeDiskReport();
const OLD_NGINX = "sha256:2222222222222222222222222222222222222222222222222222222222222222";
const DANGLING = "sha256:3333333333333333333333333333333333333333333333333333333333333333";

function routes(user = adminUser, extra: Routes = {}): Routes {
  return {
    ...signedInAs(user),
    "GET /api/disk": report,
    "GET /api/disk/prunes": [makePruneReport()],
    ...extra,
  };
}

function rowOf(table: HTMLElement, name: string | RegExp): HTMLElement {
  return within(table).getByRole("row", { name });
}

describe("disk page", () => {
  it("sums the host's disk up and lists its images: sizes, what uses each, why a prune keeps it", async () => {
    installFakeFetch(routes());
    renderApp("/disk");

    const figures = await screen.findByRole("region", { name: "Disk summary" });
    const summary = makeDiskSummary();
    expect(within(figures).getByText("Images").closest(".kpi")).toHaveTextContent(`${formatBytes(summary.images)}4 images`);
    expect(within(figures).getByText("Volumes").closest(".kpi")).toHaveTextContent(formatBytes(summary.volumes));
    expect(within(figures).getByText("Build cache").closest(".kpi")).toHaveTextContent("56.0 MB");
    expect(within(figures).getByText("Reclaimable").closest(".kpi")).toHaveTextContent("410.0 MB");
    expect(within(figures).getByText("Measured").closest(".kpi")).toHaveTextContent(/2026-03-01 \d\d:00/);

    const table = screen.getByRole("table", { name: "Images" });
    const current = rowOf(table, /nginx:1\.27/);
    expect(current).toHaveTextContent("190.0 MB");
    expect(current).toHaveTextContent("110.0 MB its own, 80.0 MB shared");
    expect(within(current).getByRole("link", { name: "web" })).toHaveAttribute("href", "/stacks/web");
    expect(current).toHaveTextContent("web / proxy (web-proxy-1)");
    expect(within(current).getByText(/^protected/)).toHaveAttribute("title", "an image of web/proxy");
    expect(current).toHaveTextContent("protected: an image of web/proxy");
    expect(rowOf(table, /nginx:1\.25/)).toHaveTextContent("nothing");
    expect(rowOf(table, /adminer:4/)).toHaveTextContent("adminer");
    const dangling = rowOf(table, /dangling/);
    expect(dangling).toHaveTextContent("<none>");
    expect(dangling).toHaveTextContent("333333333333");
    expect(within(dangling).queryByText(/^protected/)).not.toBeInTheDocument();

    // Prunes of the host, newest first.
    const history = screen.getByRole("list", { name: "Prunes of this host" });
    expect(history).toHaveTextContent("2 objects removed, 50.0 MB freed");
    expect(history).toHaveTextContent("40.0 MB of images, 10.0 MB of containers");
    expect(history).toHaveTextContent("by alice");
    expect(history).toHaveTextContent("1 left");
  });

  it("filters the images by use (unused, dangling) and by stack, and keeps the tab in the address", async () => {
    installFakeFetch(routes());
    const { user, router } = renderApp("/disk");

    const table = await screen.findByRole("table", { name: "Images" });
    const filters = screen.getByRole("group", { name: "Filters" });
    expect(filters).toHaveTextContent("4 of 4");
    await user.selectOptions(within(filters).getByRole("combobox", { name: "Show" }), "Unused only");
    expect(within(table).getAllByRole("row").slice(1).map((row) => row.textContent)).toEqual([
      expect.stringContaining("nginx:1.25"),
      expect.stringContaining("<none>"),
    ]);
    await user.selectOptions(within(filters).getByRole("combobox", { name: "Show" }), "Dangling only");
    expect(filters).toHaveTextContent("1 of 4");
    await user.selectOptions(within(filters).getByRole("combobox", { name: "Show" }), "Everything");
    await user.selectOptions(within(filters).getByRole("combobox", { name: "Stack" }), "web");
    expect(within(table).getAllByRole("row")).toHaveLength(2);
    expect(table).toHaveTextContent("nginx:1.27");

    // Volumes: the stack's own, an anonymous one (its short name), one of a stack whose folder is gone.
    await user.click(screen.getByRole("tab", { name: /Volumes/ }));
    expect(router.state.location.search).toBe("?tab=volumes");
    const volumes = screen.getByRole("table", { name: "Volumes" });
    expect(rowOf(volumes, /web_data/)).toHaveTextContent("300.0 MB");
    expect(within(rowOf(volumes, /web_data/)).getAllByRole("link", { name: "web" })[0]).toHaveAttribute("href", "/stacks/web");
    expect(rowOf(volumes, /ffffffffffff/)).toHaveTextContent("anonymous");
    const gone = rowOf(volumes, /old_cache/);
    expect(gone).toHaveTextContent("old (its folder is gone)");
    expect(within(gone).queryByRole("link", { name: /old/ })).not.toBeInTheDocument();
    await user.selectOptions(within(screen.getByRole("group", { name: "Filters" })).getByRole("combobox", { name: "Show" }), "Unused only");
    expect(screen.getByRole("group", { name: "Filters" })).toHaveTextContent("2 of 3");

    await user.click(screen.getByRole("tab", { name: /Containers of no stack/ }));
    const loose = screen.getByRole("table", { name: "Containers of no stack" });
    expect(rowOf(loose, /leftover/)).toHaveTextContent("exited");
    await user.click(screen.getByRole("tab", { name: /Build cache/ }));
    expect(screen.getByRole("table", { name: "Build cache" })).toHaveTextContent("RUN apt-get install -y curl");
  });

  it("shows a viewer everything and no control that would be refused", async () => {
    installFakeFetch(routes(viewerUser));
    const { user } = renderApp("/disk");

    const table = await screen.findByRole("table", { name: "Images" });
    expect(within(table).queryByRole("button", { name: /Remove/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Prune…" })).not.toBeInTheDocument();
    expect(screen.queryByRole("form", { name: "Pull an image" })).not.toBeInTheDocument();
    await user.click(screen.getByRole("tab", { name: /Volumes/ }));
    expect(screen.queryByRole("button", { name: /Remove/ })).not.toBeInTheDocument();
    await user.click(screen.getByRole("tab", { name: /Networks/ }));
    expect(screen.queryByRole("button", { name: /Remove/ })).not.toBeInTheDocument();
    expect(screen.getByRole("list", { name: "Prunes of this host" })).toBeInTheDocument();
  });

  it("lets an operator pull and remove the images of the stacks' repositories only; the server's refusal is shown", async () => {
    const fake = installFakeFetch(
      routes(operatorUser, {
        "POST /api/disk/images/pull": async (request: Request) => {
          const { reference } = (await request.json()) as { reference: string };
          if (reference.startsWith("redis")) {
            return json({ detail: "Operators act on the images of their stacks' repositories only" }, { status: 403 });
          }
          return noContent();
        },
        "DELETE /api/disk/images/:id": noContent(),
      }),
    );
    const { user } = renderApp("/disk");

    const table = await screen.findByRole("table", { name: "Images" });
    expect(within(table).getByRole("button", { name: "Remove image nginx:1.25" })).toBeInTheDocument();
    expect(within(table).queryByRole("button", { name: "Remove image adminer:4" })).not.toBeInTheDocument();
    expect(within(table).queryByRole("button", { name: /Remove image 333333333333/ })).not.toBeInTheDocument();
    expect(screen.queryByRole("button", { name: "Prune…" })).not.toBeInTheDocument();

    const pull = screen.getByRole("form", { name: "Pull an image" });
    await user.type(within(pull).getByRole("textbox", { name: "Pull an image" }), "redis:7");
    await user.click(within(pull).getByRole("button", { name: "Pull" }));
    expect(await within(pull).findByRole("alert")).toHaveTextContent("Operators act on the images of their stacks' repositories only");
    await user.clear(within(pull).getByRole("textbox", { name: "Pull an image" }));
    await user.type(within(pull).getByRole("textbox", { name: "Pull an image" }), "nginx:1.28");
    await user.click(within(pull).getByRole("button", { name: "Pull" }));
    expect(await within(pull).findByRole("status")).toHaveTextContent("Pulled nginx:1.28.");
    expect(await fake.calls("POST", "/api/disk/images/pull")[1]?.json()).toEqual({ reference: "nginx:1.28" });

    await user.click(within(table).getByRole("button", { name: "Remove image nginx:1.25" }));
    const dialog = screen.getByRole("alertdialog", { name: "Remove image nginx:1.25?" });
    expect(dialog).toHaveTextContent("about 100.0 MB freed");
    await user.click(within(dialog).getByRole("button", { name: "Remove the image" }));
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
    expect(fake.calls("DELETE", `/api/disk/images/${encodeURIComponent(OLD_NGINX)}`)).toHaveLength(1);
  });

  it("lets an admin remove an image (the engine's refusal shown), a network, and a volume once its name is typed", async () => {
    const fake = installFakeFetch(
      routes(adminUser, {
        "DELETE /api/disk/images/:id": (_request: Request, params: Record<string, string>) =>
          params.id === DANGLING ? noContent() : json({ detail: "Containers use this image: adminer" }, { status: 409 }),
        "DELETE /api/disk/networks/:id": noContent(),
        "DELETE /api/disk/volumes/:name": (request: Request) =>
          new URL(request.url).searchParams.get("confirm") === "old_cache"
            ? noContent()
            : json({ detail: "Type the volume's name (old_cache) to remove it and its data" }, { status: 400 }),
      }),
    );
    const { user } = renderApp("/disk");

    const table = await screen.findByRole("table", { name: "Images" });
    await user.click(within(table).getByRole("button", { name: "Remove image adminer:4" }));
    let dialog = screen.getByRole("alertdialog", { name: "Remove image adminer:4?" });
    await user.click(within(dialog).getByRole("button", { name: "Remove the image" }));
    expect(await within(dialog).findByRole("alert")).toHaveTextContent("Containers use this image: adminer");
    await user.click(within(dialog).getByRole("button", { name: "Cancel" }));
    await user.click(within(table).getByRole("button", { name: "Remove image 333333333333" }));
    dialog = screen.getByRole("alertdialog", { name: "Remove image 333333333333?" });
    expect(dialog).toHaveTextContent("The untagged image leaves");
    await user.click(within(dialog).getByRole("button", { name: "Remove the image" }));
    await waitFor(() => expect(fake.calls("DELETE", `/api/disk/images/${encodeURIComponent(DANGLING)}`)).toHaveLength(1));

    await user.click(screen.getByRole("tab", { name: /Networks/ }));
    const networks = screen.getByRole("table", { name: "Networks" });
    expect(within(networks).queryByRole("button", { name: "Remove network bridge" })).not.toBeInTheDocument();
    await user.click(within(networks).getByRole("button", { name: "Remove network loose-net" }));
    await user.click(screen.getByRole("button", { name: "Remove the network" }));
    await waitFor(() => expect(fake.calls("DELETE", `/api/disk/networks/${"6".repeat(64)}`)).toHaveLength(1));

    await user.click(screen.getByRole("tab", { name: /Volumes/ }));
    await user.click(screen.getByRole("button", { name: "Remove volume old_cache" }));
    dialog = screen.getByRole("dialog", { name: "Remove volume old_cache?" });
    expect(within(dialog).getByTestId("volume-stack")).toHaveTextContent("It belongs to the stack old (its folder is gone)");
    const remove = within(dialog).getByRole("button", { name: "Remove the volume" });
    expect(remove).toBeDisabled();
    const typed = within(dialog).getByRole("textbox", { name: "Type the volume's name, old_cache, to confirm" });
    await user.type(typed, "old_cach");
    expect(remove).toBeDisabled();
    await user.type(typed, "e");
    await user.click(remove);
    await waitFor(() => expect(screen.queryByRole("dialog")).not.toBeInTheDocument());
    const sent = fake.calls("DELETE", "/api/disk/volumes/old_cache");
    expect(sent).toHaveLength(1);
    expect(new URL(sent[0]?.url ?? "").searchParams.get("confirm")).toBe("old_cache");
  });

  it("shows an agent's disk through the central, and says so when the agent is too old to offer it", async () => {
    const fake = installFakeFetch({
      ...signedInAs(adminUser),
      "GET /api/agents": [
        makeAgent({ id: 3, name: "nas", capabilities: [...ALL_CAPABILITIES, "disk"] }),
        makeAgent({ id: 4, name: "pi", version: "0.0.9", capabilities: ALL_CAPABILITIES }),
      ],
      "GET /api/agents/3/disk": makeDiskReport({ images: [], volumes: [] }),
      "GET /api/agents/3/disk/prunes": [],
    });
    const { user } = renderApp("/disk?host=3");

    expect(await screen.findByText("No images on this host.")).toBeInTheDocument();
    expect(screen.getByText(/What Docker keeps on nas/)).toBeInTheDocument();
    expect(screen.getByText("No prune on this host yet.")).toBeInTheDocument();
    expect(fake.calls("GET", "/api/disk")).toHaveLength(0);

    await user.selectOptions(screen.getByRole("combobox", { name: "Host" }), "pi");
    expect(await screen.findByText(/does not offer its disk, images, volumes and networks/)).toBeInTheDocument();
    expect(fake.calls("GET", "/api/agents/4/disk")).toHaveLength(0);
  });
});
