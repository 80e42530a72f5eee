import type { FileEntry, Folder } from "../api/types";

export function makeEntry(overrides: Partial<FileEntry> & Pick<FileEntry, "path">): FileEntry {
  const name = overrides.path.split("/").at(-1) ?? overrides.path;
  return {
    name,
    type: "file",
    size: 0,
    mode: "0644",
    modified: "2025-03-01T10:00:00Z",
    target: null,
    ...overrides,
  };
}

export function makeFolder(path: string, entries: FileEntry[]): Folder {
  return { path, entries };
}

/** A File of `size` bytes whose `webkitRelativePath` is set, as a folder picker returns it. */
export function makeFile(name: string, size: number, relativePath = ""): File {
  const file = new File([new Uint8Array(size)], name, { type: "text/plain" });
  if (relativePath) Object.defineProperty(file, "webkitRelativePath", { value: relativePath });
  return file;
}
