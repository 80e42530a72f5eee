import { afterEach, describe, expect, it } from "vitest";
import { createEditor, type EditorHandle } from "./codemirror";

let handle: EditorHandle | null = null;
afterEach(() => {
  handle?.destroy();
  handle = null;
  document.body.innerHTML = "";
});

function open(doc: string, language: "yaml" | "env" | "plain", changes: string[] = []) {
  const parent = document.createElement("div");
  document.body.append(parent);
  handle = createEditor({ parent, doc, language, label: "Contents", onChange: (text) => changes.push(text) });
  return handle;
}

/** The class of the highlighted span that holds exactly `text`. */
function classOf(text: string): string {
  const span = Array.from(handle?.view.contentDOM.querySelectorAll("span") ?? []).find((s) => s.textContent === text);
  return span?.className ?? "";
}

describe("code editor", () => {
  it("highlights KEY=VALUE lines: comments, keys, values and ${VAR} references", () => {
    open('# settings\nexport TZ=UTC\nPORT=8080\nGREETING="hi ${USER}"\n', "env");
    const key = classOf("PORT");
    const value = classOf("8080");
    expect(key).not.toBe("");
    expect(value).not.toBe("");
    expect(key).not.toBe(value);
    expect(classOf("TZ")).toBe(key);
    expect(classOf("# settings")).not.toBe("");
    expect(classOf("export")).not.toBe("");
    expect(classOf("${USER}")).not.toBe(value);
  });

  it("highlights YAML keys", () => {
    open("services:\n  app:\n    image: nginx\n", "yaml");
    expect(classOf("services")).not.toBe("");
  });

  it("reports edits but not text replaced from outside", () => {
    const changes: string[] = [];
    const editor = open("a", "plain", changes);
    editor.view.dispatch({ changes: { from: 1, insert: "b" } });
    expect(changes).toEqual(["ab"]);
    editor.setDoc("reloaded");
    expect(editor.view.state.doc.toString()).toBe("reloaded");
    expect(changes).toEqual(["ab"]);
  });
});
