import { EditorView } from "@codemirror/view";
import { screen, waitFor, within } from "@testing-library/react";
import { describe, expect, it } from "vitest";
import { installFakeFetch, json, type Routes } from "../../test/fakeFetch";
import { makeEntry, makeFolder } from "../../test/fileFixtures";
import { adminUser, signedInAs } from "../../test/fixtures";
import { renderApp } from "../../test/renderApp";

const folder = makeFolder("web", [makeEntry({ path: "web/compose.yaml", size: 40 })]);
const COMPOSE = "services:\n  app:\n    image: nginx\n";

function routes(extra: Routes = {}): Routes {
  return {
    ...signedInAs(adminUser),
    "GET /api/files": folder,
    "GET /api/files/content": { path: "web/compose.yaml", content: COMPOSE, version: "v1" },
    ...extra,
  };
}

/** The CodeMirror editor once it has loaded (a textarea stands in until then). */
async function codeEditor(name: string): Promise<EditorView> {
  const editor = await screen.findByRole("region", { name: /web\/compose\.yaml/ });
  await waitFor(() => expect(editor.querySelector("[data-editor=codemirror]")).not.toBeNull());
  const content = within(editor).getByRole("textbox", { name });
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error("no CodeMirror view");
  return view;
}

function typeAtEnd(view: EditorView, text: string) {
  view.dispatch({ changes: { from: view.state.doc.length, insert: text } });
}

describe("file editor", () => {
  it("opens a file from the listing with YAML highlighting and saves it with its version", async () => {
    const fake = installFakeFetch(
      routes({ "PUT /api/files/content": () => json({ path: "web/compose.yaml", version: "v2" }) }),
    );
    const { user } = renderApp("/files?path=web");

    await user.click(await screen.findByRole("link", { name: "compose.yaml" }));
    const view = await codeEditor("Contents of web/compose.yaml");
    expect(view.state.doc.toString()).toBe(COMPOSE);
    expect(screen.getByText(/YAML/)).toBeInTheDocument();
    // Keys are highlighted.
    await waitFor(() => expect(view.contentDOM.querySelector("span[class]")).not.toBeNull());

    typeAtEnd(view, "    restart: always\n");
    expect(await screen.findByText(/Unsaved changes/)).toBeInTheDocument();
    await user.click(screen.getByRole("button", { name: "Save" }));

    await waitFor(() => expect(fake.calls("PUT", "/api/files/content")).toHaveLength(1));
    expect(await fake.calls("PUT", "/api/files/content")[0]?.json()).toEqual({
      path: "web/compose.yaml",
      content: `${COMPOSE}    restart: always\n`,
      version: "v1",
    });
    expect(await screen.findByText("Saved.")).toBeInTheDocument();
    expect(screen.queryByText(/Unsaved changes/)).not.toBeInTheDocument();

    // The next save sends the new version.
    typeAtEnd(view, "#\n");
    await user.click(screen.getByRole("button", { name: "Save" }));
    await waitFor(() => expect(fake.calls("PUT", "/api/files/content")).toHaveLength(2));
    expect((await fake.calls("PUT", "/api/files/content")[1]?.json()) as { version: string }).toMatchObject({
      version: "v2",
    });
  });

  it("on a conflict shows the detail and reloads the file on request", async () => {
    let content = COMPOSE;
    const fake = installFakeFetch(
      routes({
        "GET /api/files/content": () => json({ path: "web/compose.yaml", content, version: content === COMPOSE ? "v1" : "v9" }),
        "PUT /api/files/content": () =>
          json({ detail: "web/compose.yaml changed since it was opened; reload it and edit again" }, { status: 409 }),
      }),
    );
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");

    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "# mine\n");
    await user.click(screen.getByRole("button", { name: "Save" }));
    expect(await screen.findByRole("alert")).toHaveTextContent("changed since it was opened");

    content = "services: {}\n";
    await user.click(screen.getByRole("button", { name: "Reload" }));
    await waitFor(() => expect(view.state.doc.toString()).toBe("services: {}\n"));
    expect(fake.calls("GET", "/api/files/content")).toHaveLength(2);
    expect(screen.queryByRole("alert")).not.toBeInTheDocument();
  });

  it("shows why a file cannot be edited", async () => {
    installFakeFetch(
      routes({
        "GET /api/files/content": () =>
          json({ detail: "Not a text file (not UTF-8); download it instead" }, { status: 400 }),
      }),
    );
    renderApp("/files?path=web&edit=web/compose.yaml");
    const alert = await screen.findByRole("alert");
    expect(alert).toHaveTextContent("Not a text file");
    expect(within(alert).getByRole("button", { name: "Download" })).toBeInTheDocument();
  });

  it("asks before closing with unsaved changes", async () => {
    installFakeFetch(routes());
    const { user } = renderApp("/files?path=web&edit=web/compose.yaml");

    const view = await codeEditor("Contents of web/compose.yaml");
    typeAtEnd(view, "x");
    await user.click(screen.getByRole("button", { name: "Close" }));
    const dialog = screen.getByRole("alertdialog", { name: "Discard unsaved changes?" });
    await user.click(within(dialog).getByRole("button", { name: "Keep editing" }));
    expect(screen.getByRole("region", { name: /web\/compose\.yaml/ })).toBeInTheDocument();

    await user.click(screen.getByRole("button", { name: "Close" }));
    await user.click(within(screen.getByRole("alertdialog")).getByRole("button", { name: "Discard" }));
    await waitFor(() => expect(screen.queryByRole("region", { name: /web\/compose\.yaml/ })).not.toBeInTheDocument());
  });
});
