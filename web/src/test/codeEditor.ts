import { EditorView } from "@codemirror/view";
import { waitFor, within } from "@testing-library/react";
import { expect } from "vitest";

/** The CodeMirror editor named `name` inside `container`, once it has loaded (a plain
 * textarea stands in until then). */
export async function codeEditorIn(container: HTMLElement, name: string): Promise<EditorView> {
  await waitFor(() => expect(container.querySelector("[data-editor=codemirror]")).not.toBeNull());
  const content = within(container).getByRole("textbox", { name });
  const view = EditorView.findFromDOM(content);
  if (!view) throw new Error(`no CodeMirror view named ${name}`);
  return view;
}

/** What the user typing would do: replace the whole text, or add at the end. */
export function setText(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: 0, to: view.state.doc.length, insert: text } });
}

export function typeAtEnd(view: EditorView, text: string): void {
  view.dispatch({ changes: { from: view.state.doc.length, insert: text } });
}

export function textOf(view: EditorView): string {
  return view.state.doc.toString();
}
