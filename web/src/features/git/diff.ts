/** What a line of a unified diff is: drawn in its own colour (git.css). */
export type DiffLineKind = "header" | "hunk" | "added" | "removed" | "context" | "note";

export interface DiffLine {
  kind: DiffLineKind;
  text: string;
}

/**
 * A unified diff's text (as the server makes it: `--- a/x`, `+++ b/x`, `@@ … @@`, then
 * lines starting with `+`, `-` or a space) cut into lines, each with its kind. The file
 * names are headers only before the first hunk: inside one, `--- x` is a removed line
 * that began with `-- `. A line that is none of these (the server's "… more lines" where
 * it cut a long diff, or "\ No newline at end of file") is a note.
 */
export function diffLines(diff: string): DiffLine[] {
  const lines = diff.endsWith("\n") ? diff.slice(0, -1).split("\n") : diff.split("\n");
  let inHunk = false;
  return diff === ""
    ? []
    : lines.map((text): DiffLine => {
        if (text.startsWith("@@")) {
          inHunk = true;
          return { kind: "hunk", text };
        }
        if (!inHunk && (text.startsWith("--- ") || text.startsWith("+++ "))) return { kind: "header", text };
        if (inHunk && text.startsWith("+")) return { kind: "added", text };
        if (inHunk && text.startsWith("-")) return { kind: "removed", text };
        if (inHunk && (text.startsWith(" ") || text === "")) return { kind: "context", text };
        return { kind: "note", text };
      });
}

/** How many lines a diff adds and removes ("+3 −1"). */
export function diffStat(lines: readonly DiffLine[]): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of lines) {
    if (line.kind === "added") added += 1;
    else if (line.kind === "removed") removed += 1;
  }
  return { added, removed };
}
