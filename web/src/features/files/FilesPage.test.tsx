import { screen, waitFor, within } from "@testing-library/react";
import { beforeEach, describe, expect, it } from "vitest";
import { installFakeFetch, json, noContent } from "../../test/fakeFetch";
import { installFakeXhr } from "../../test/fakeXhr";
import { plainUser } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";
import { fileRoutes, query, rowOf } from "./filesTesting";
import { SHOW_HIDDEN_KEY, SHOW_HIDDEN_LEGACY_KEY } from "./showHidden";

beforeEach(() => {
  installFakeXhr();
});

describe("files listing", () => {
  it("shows the breadcrumb and the folder's entries", async () => {
    const fake = installFakeFetch(fileRoutes());
    renderApp("/files?path=web/conf");

    expect(await screen.findByRole("heading", { level: 1, name: "Files" })).toBeInTheDocument();
    const crumbs = screen.getByRole("navigation", { name: "Breadcrumb" });
    expect(within(crumbs).getAllByRole("link").map((a) => [a.textContent, a.getAttribute("href")])).toEqual([
      ["Stacks folder", "/files"],
      ["web", "/files?path=web"],
      ["conf", "/files?path=web/conf"],
    ]);
    expect(within(crumbs).getByRole("link", { name: "conf" })).toHaveAttribute("aria-current", "page");

    await screen.findByRole("table", { name: "Files" });
    expect(query(fake.calls("GET", "/api/files")[0])).toEqual({ path: "web/conf", hidden: "false" });

    const data = rowOf("data");
    expect(within(data).getByRole("link", { name: "data" })).toHaveAttribute("href", "/files?path=web/conf/data");
    expect(data).toHaveTextContent("Folder");
    expect(data).toHaveTextContent("0755");

    const app = rowOf("app.yml");
    expect(within(app).getByRole("link", { name: "app.yml" })).toHaveAttribute(
      "href",
      "/files?path=web/conf&edit=web/conf/app.yml",
    );
    expect(app).toHaveTextContent("1.5 kB");
    expect(app).toHaveTextContent("0644");
    expect(within(app).getByRole("button", { name: "Download app.yml" })).toBeInTheDocument();

    const link = rowOf("current");
    expect(link).toHaveTextContent("Link");
    expect(link).toHaveTextContent("-> ../shared");
    // A link to a folder inside the stacks folder opens that folder, through the link.
    expect(within(link).getByRole("link", { name: "current" })).toHaveAttribute("href", "/files?path=web/conf/current");

    expect(screen.getByRole("link", { name: "Parent folder" })).toHaveAttribute("href", "/files?path=web");
  });

  it("enters a folder when its name is clicked", async () => {
    const fake = installFakeFetch(fileRoutes());
    const { user } = renderApp("/files?path=web/conf");

    await user.click(await screen.findByRole("link", { name: "data" }));
    await waitFor(() =>
      expect(fake.calls("GET", "/api/files").map((r) => query(r).path)).toContain("web/conf/data"),
    );
  });

  it("tells a plain user that files are for admins", async () => {
    const fake = installFakeFetch(fileRoutes({}, plainUser));
    renderApp("/files");

    expect(await screen.findByText("Files are for admins.")).toBeInTheDocument();
    expect(fake.calls("GET", "/api/files")).toHaveLength(0);
  });

  it("shows the server's detail when an admin's path is refused", async () => {
    installFakeFetch(
      fileRoutes({
        "GET /api/files": () => json({ detail: "Path leads outside the root: web/out" }, { status: 403 }),
      }),
    );
    renderApp("/files?path=web/out");

    expect(await screen.findByRole("alert")).toHaveTextContent("Path leads outside the root: web/out");
    expect(screen.queryByText("Files are for admins.")).not.toBeInTheDocument();
    expect(screen.getByRole("link", { name: "Back to the stacks folder" })).toBeInTheDocument();
  });

  it("shows the server's detail when the folder is missing", async () => {
    installFakeFetch(
      fileRoutes({ "GET /api/files": () => json({ detail: "No such file or folder: gone" }, { status: 404 }) }),
    );
    renderApp("/files?path=gone");

    expect(await screen.findByRole("alert")).toHaveTextContent("No such file or folder: gone");
    expect(screen.getByRole("link", { name: "Back to the stacks folder" })).toBeInTheDocument();
  });
});

describe("show hidden", () => {
  it("lists hidden entries when on, saves it under both keys and reads it back", async () => {
    const fake = installFakeFetch(fileRoutes());
    const first = renderApp("/files?path=web/conf");

    const toggle = await screen.findByRole("checkbox", { name: "Show hidden" });
    expect(toggle).not.toBeChecked();
    await first.user.click(toggle);
    expect(toggle).toBeChecked();
    expect(localStorage.getItem(SHOW_HIDDEN_KEY)).toBe("true");
    expect(localStorage.getItem(SHOW_HIDDEN_LEGACY_KEY)).toBe("true");
    await waitFor(() => expect(fake.calls("GET", "/api/files").map((r) => query(r).hidden)).toContain("true"));
    first.unmount();

    // A reload: the page starts with it on.
    const reads = fake.calls("GET", "/api/files").length;
    renderApp("/files?path=web/conf");
    expect(await screen.findByRole("checkbox", { name: "Show hidden" })).toBeChecked();
    await waitFor(() => expect(fake.calls("GET", "/api/files").length).toBeGreaterThan(reads));
    expect(query(fake.calls("GET", "/api/files").at(-1)).hidden).toBe("true");
  });

  it("reads the specification's key when the issue's is missing", async () => {
    localStorage.setItem(SHOW_HIDDEN_LEGACY_KEY, "true");
    installFakeFetch(fileRoutes());
    renderApp("/files");
    expect(await screen.findByRole("checkbox", { name: "Show hidden" })).toBeChecked();
  });
});

describe("folder changes", () => {
  it("creates a folder in the current folder", async () => {
    const fake = installFakeFetch(
      fileRoutes({ "POST /api/files/folder": () => json({ path: "web/conf/new" }, { status: 201 }) }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });
    const reads = fake.calls("GET", "/api/files").length;

    await user.click(screen.getByRole("button", { name: "New folder" }));
    await user.type(screen.getByRole("textbox", { name: "Folder name" }), "new");
    await user.click(screen.getByRole("button", { name: "Create" }));

    await waitFor(() => expect(fake.calls("POST", "/api/files/folder")).toHaveLength(1));
    expect(await fake.calls("POST", "/api/files/folder")[0]?.json()).toEqual({ path: "web/conf/new" });
    await waitFor(() => expect(fake.calls("GET", "/api/files").length).toBeGreaterThan(reads));
    expect(screen.queryByRole("textbox", { name: "Folder name" })).not.toBeInTheDocument();
  });

  it("shows the server's detail when the folder exists", async () => {
    installFakeFetch(
      fileRoutes({ "POST /api/files/folder": () => json({ detail: "Already exists: web/conf/data" }, { status: 409 }) }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(screen.getByRole("button", { name: "New folder" }));
    await user.type(screen.getByRole("textbox", { name: "Folder name" }), "data");
    await user.click(screen.getByRole("button", { name: "Create" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("Already exists: web/conf/data");
  });

  it("creates an empty file (version null) and opens it in the editor", async () => {
    const fake = installFakeFetch(
      fileRoutes({
        "PUT /api/files/content": () => json({ path: "web/conf/notes.md", version: "v1" }),
        "GET /api/files/content": { path: "web/conf/notes.md", content: "", version: "v1" },
      }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(screen.getByRole("button", { name: "New file" }));
    await user.type(screen.getByRole("textbox", { name: "File name" }), "notes.md");
    await user.click(screen.getByRole("button", { name: "Create" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/files/content")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/files/content")[0]?.json()).toEqual({
      path: "web/conf/notes.md",
      content: "",
      version: null,
    });
    expect(await screen.findByRole("region", { name: "web/conf/notes.md" })).toBeInTheDocument();
  });

  it("renames with a move in the same folder", async () => {
    const fake = installFakeFetch(
      fileRoutes({ "POST /api/files/move": () => json({ path: "web/conf/main.yml" }) }),
    );
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Rename app.yml" }));
    const input = screen.getByRole("textbox", { name: "New name for app.yml" });
    await user.clear(input);
    await user.type(input, "main.yml{Enter}");

    await waitFor(() => expect(fake.calls("POST", "/api/files/move")).toHaveLength(1));
    expect(await fake.calls("POST", "/api/files/move")[0]?.json()).toEqual({
      source: "web/conf/app.yml",
      destination: "web/conf/main.yml",
    });
  });

  it("asks before deleting a folder with everything inside, then deletes recursively", async () => {
    const fake = installFakeFetch(fileRoutes({ "DELETE /api/files": () => noContent() }));
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("data")).getByRole("button", { name: "Delete data" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete folder data?" });
    expect(dialog).toHaveTextContent("everything inside it");
    expect(fake.calls("DELETE", "/api/files")).toHaveLength(0);
    await user.click(within(dialog).getByRole("button", { name: "Delete" }));

    await waitFor(() => expect(fake.calls("DELETE", "/api/files")).toHaveLength(1));
    expect(query(fake.calls("DELETE", "/api/files")[0])).toEqual({ path: "web/conf/data", recursive: "true" });
    await waitFor(() => expect(screen.queryByRole("alertdialog")).not.toBeInTheDocument());
  });

  it("deletes a file without recursive", async () => {
    const fake = installFakeFetch(fileRoutes({ "DELETE /api/files": () => noContent() }));
    const { user } = renderApp("/files?path=web/conf");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("app.yml")).getByRole("button", { name: "Delete app.yml" }));
    const dialog = screen.getByRole("alertdialog", { name: "Delete file app.yml?" });
    await user.click(within(dialog).getByRole("button", { name: "Delete" }));
    await waitFor(() => expect(fake.calls("DELETE", "/api/files")).toHaveLength(1));
    expect(query(fake.calls("DELETE", "/api/files")[0])).toEqual({ path: "web/conf/app.yml", recursive: "false" });
  });
});
