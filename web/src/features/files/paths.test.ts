import { describe, expect, it } from "vitest";
import { baseName, editorLanguage, hasDotSegment, joinPath, nameProblem, parentPath, pathSegments } from "./paths";

describe("file paths", () => {
  it("joins, splits and walks up", () => {
    expect(joinPath("", "a.txt")).toBe("a.txt");
    expect(joinPath("a/b", "c/d.txt")).toBe("a/b/c/d.txt");
    expect(joinPath("a/", "/b")).toBe("a/b");
    expect(pathSegments("a//b/./c")).toEqual(["a", "b", "c"]);
    expect(parentPath("a/b/c")).toBe("a/b");
    expect(parentPath("a")).toBe("");
    expect(parentPath("")).toBe("");
    expect(baseName("a/b/c.txt")).toBe("c.txt");
    expect(baseName("")).toBe("");
  });

  it("finds dot-segments anywhere in a path", () => {
    expect(hasDotSegment(".env")).toBe(true);
    expect(hasDotSegment("conf/.hidden/x")).toBe(true);
    expect(hasDotSegment("web/.secrets")).toBe(true);
    expect(hasDotSegment("web/compose.yaml")).toBe(false);
    expect(hasDotSegment("a.b/c.d")).toBe(false);
  });

  it("checks names typed for new entries", () => {
    expect(nameProblem("")).toBe("Enter a name");
    expect(nameProblem("a/b")).not.toBeNull();
    expect(nameProblem("..")).not.toBeNull();
    expect(nameProblem("data")).toBeNull();
  });

  it("picks the editor's highlighting by name", () => {
    expect(editorLanguage("web/compose.yaml")).toBe("yaml");
    expect(editorLanguage("web/x.YML")).toBe("yaml");
    expect(editorLanguage("web/.env")).toBe("env");
    expect(editorLanguage("web/prod.env")).toBe("env");
    expect(editorLanguage("web/.secrets")).toBe("env");
    expect(editorLanguage("web/README.md")).toBe("plain");
  });
});
