import { render, screen, within } from "@testing-library/react";
import { MemoryRouter } from "react-router";
import { describe, expect, it } from "vitest";
import { makePreview } from "../../test/gitFixtures";
import { PreviewView } from "./DiffView";

describe("a preview's diff", () => {
  it("shows each file with its change and its lines, added and removed ones coloured", () => {
    const preview = makePreview({
      changes: [
        { path: "compose.yaml", change: "modified", diff: "--- a/compose.yaml\n+++ b/compose.yaml\n@@ -1 +1 @@\n-old\n+new\n" },
        { path: "config/app.bin", change: "added", diff: null },
      ],
    });
    render(<PreviewView preview={preview} />, { wrapper: MemoryRouter });

    expect(screen.getByText("web: nginx 1.28")).toBeInTheDocument();
    const files = within(screen.getByRole("list", { name: "Changed files" })).getAllByRole("listitem");
    expect(files).toHaveLength(2);
    expect(files[0]).toHaveTextContent("compose.yaml");
    expect(files[0]).toHaveTextContent("modified");
    expect(files[0]).toHaveTextContent("+1 −1");

    const diff = screen.getByLabelText("Diff of compose.yaml");
    expect(diff.tagName).toBe("PRE");
    expect(within(diff).getByText("-old")).toHaveClass("diff-removed");
    expect(within(diff).getByText("+new")).toHaveClass("diff-added");
    expect(within(diff).getByText("@@ -1 +1 @@")).toHaveClass("diff-hunk");
    expect(within(diff).getByText("--- a/compose.yaml")).toHaveClass("diff-header");
    // The text is the diff as the server made it (copied as it is).
    expect(diff.textContent).toBe("--- a/compose.yaml\n+++ b/compose.yaml\n@@ -1 +1 @@\n-old\n+new\n");

    expect(files[1]).toHaveTextContent("added");
    expect(files[1]).toHaveTextContent("Not shown: a binary file, or too large to show.");
    expect(screen.queryByLabelText("Diff of config/app.bin")).not.toBeInTheDocument();
  });

  it("says so when no file changes", () => {
    render(<PreviewView preview={makePreview({ changes: [] })} />, { wrapper: MemoryRouter });
    expect(screen.getByText("No file of the stack changes.")).toBeInTheDocument();
  });
});
