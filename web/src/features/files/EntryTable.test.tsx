import { screen, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { installFakeFetch } from "../../test/fakeFetch";
import { makeEntry, makeFolder } from "../../test/fileFixtures";
import { renderApp } from "../../test/renderApp";
import { fileRoutes, rowOf } from "./filesTesting";

const links = makeFolder("web", [
  makeEntry({ path: "web/to-dir", type: "symlink", target: "../shared", link: "dir" }),
  makeEntry({ path: "web/to-file", type: "symlink", target: "conf/app.ini", link: "file" }),
  makeEntry({ path: "web/out", type: "symlink", target: "/etc/passwd", link: "outside" }),
  makeEntry({ path: "web/gone", type: "symlink", target: "missing", link: "broken" }),
  makeEntry({ path: "web/fifo", type: "other" }),
]);

describe("entry table", () => {
  it("opens and downloads only what links lead to inside the stacks folder", async () => {
    installFakeFetch(fileRoutes({ "GET /api/files": links }));
    renderApp("/files?path=web");
    await screen.findByRole("table", { name: "Files" });

    const toDir = rowOf("to-dir");
    expect(within(toDir).getByRole("link", { name: "to-dir" })).toHaveAttribute("href", "/files?path=web/to-dir");
    expect(within(toDir).getByRole("button", { name: "Download to-dir" })).toBeInTheDocument();

    const toFile = rowOf("to-file");
    expect(within(toFile).getByRole("link", { name: "to-file" })).toHaveAttribute(
      "href",
      "/files?path=web&edit=web/to-file",
    );
    expect(within(toFile).getByRole("button", { name: "Download to-file" })).toBeInTheDocument();

    const out = rowOf("out");
    expect(out).toHaveTextContent("-> /etc/passwd");
    expect(out).toHaveTextContent("outside the stacks folder");
    expect(within(out).queryByRole("link", { name: "out" })).not.toBeInTheDocument();
    expect(within(out).queryByRole("button", { name: "Download out" })).not.toBeInTheDocument();
    expect(within(out).getByRole("button", { name: "Delete out" })).toBeInTheDocument();

    const gone = rowOf("gone");
    expect(gone).toHaveTextContent("broken link");
    expect(within(gone).queryByRole("button", { name: "Download gone" })).not.toBeInTheDocument();

    expect(within(rowOf("fifo")).queryByRole("button", { name: "Download fifo" })).not.toBeInTheDocument();
  });

  it("asks before deleting a link, not what it points to", async () => {
    installFakeFetch(fileRoutes({ "GET /api/files": links }));
    const { user } = renderApp("/files?path=web");
    await screen.findByRole("table", { name: "Files" });

    await user.click(within(rowOf("out")).getByRole("button", { name: "Delete out" }));
    expect(screen.getByRole("alertdialog", { name: "Delete link out?" })).toHaveTextContent("not what it points to");
  });

  it("keeps the columns that a narrow screen may hide marked", async () => {
    installFakeFetch(fileRoutes({ "GET /api/files": links }));
    renderApp("/files?path=web");
    const table = await screen.findByRole("table", { name: "Files" });
    expect(within(table).getByRole("columnheader", { name: "Mode" })).toHaveClass("files-col-mode");
    expect(within(table).getByRole("columnheader", { name: "Modified" })).toHaveClass("files-col-modified");
  });
});
