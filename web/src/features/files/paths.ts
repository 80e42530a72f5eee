import type { EditorLanguage } from "../../components/editor/codemirror";

/** Paths as the files API takes them: relative to the stacks folder, "/" between parts, "" is the root. */

/** The parts of a path, without empty or "." parts. */
export function pathSegments(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

/** `a/b` + `c/d.txt` -> `a/b/c/d.txt`; the root ("") adds nothing. */
export function joinPath(...parts: string[]): string {
  return parts.flatMap(pathSegments).join("/");
}

/** `a/b/c` -> `a/b`; the root's parent is the root. */
export function parentPath(path: string): string {
  return pathSegments(path).slice(0, -1).join("/");
}

/** `a/b/c.txt` -> `c.txt`; "" for the root. */
export function baseName(path: string): string {
  return pathSegments(path).at(-1) ?? "";
}

/** True when a part of the path starts with "." (`.env`, `conf/.hidden/x`): the listing hides it by default. */
export function hasDotSegment(path: string): boolean {
  return pathSegments(path).some((part) => part.startsWith("."));
}

/** A name typed by the user for a new entry in a folder: one part, no "/" and no "." or "..". */
export function nameProblem(name: string): string | null {
  const trimmed = name.trim();
  if (!trimmed) return "Enter a name";
  if (trimmed.includes("/") || trimmed.includes("\\")) return "A name cannot contain “/” or “\\”";
  if (trimmed === "." || trimmed === "..") return "That name is not allowed";
  return null;
}


/** YAML for `.yml`/`.yaml`, KEY=VALUE for `.env`, `*.env` and `.secrets`, plain text otherwise. */
export function editorLanguage(path: string): EditorLanguage {
  const name = baseName(path).toLowerCase();
  if (name.endsWith(".yml") || name.endsWith(".yaml")) return "yaml";
  if (name === ".env" || name.endsWith(".env") || name.startsWith(".env.") || name === ".secrets") return "env";
  return "plain";
}
