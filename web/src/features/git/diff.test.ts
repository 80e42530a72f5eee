import { describe, expect, it } from "vitest";
import { diffLines, diffStat } from "./diff";

describe("diffLines", () => {
  it("names each line of a unified diff: file names, hunks, added, removed, context", () => {
    const lines = diffLines(
      "--- a/compose.yaml\n+++ b/compose.yaml\n@@ -1,3 +1,3 @@\n services:\n-  image: a\n+  image: b\n",
    );
    expect(lines).toEqual([
      { kind: "header", text: "--- a/compose.yaml" },
      { kind: "header", text: "+++ b/compose.yaml" },
      { kind: "hunk", text: "@@ -1,3 +1,3 @@" },
      { kind: "context", text: " services:" },
      { kind: "removed", text: "-  image: a" },
      { kind: "added", text: "+  image: b" },
    ]);
  });

  it("reads `--- ` and `+++ ` inside a hunk as lines removed and added (a YAML document marker)", () => {
    const lines = diffLines("--- /dev/null\n+++ b/x.yaml\n@@ -0,0 +1,2 @@\n+++ not a header\n--- \n@@ -5 +5 @@\n");
    expect(lines.map((l) => l.kind)).toEqual(["header", "header", "hunk", "added", "removed", "hunk"]);
  });

  it("keeps what is none of these as a note (the server's cut of a long diff)", () => {
    const lines = diffLines("@@ -1 +1 @@\n-a\n+b\n\\ No newline at end of file\n... 120 more lines\n");
    expect(lines.slice(-2).map((l) => l.kind)).toEqual(["note", "note"]);
    expect(diffStat(lines)).toEqual({ added: 1, removed: 1 });
  });

  it("has no lines for an empty diff", () => {
    expect(diffLines("")).toEqual([]);
  });
});
