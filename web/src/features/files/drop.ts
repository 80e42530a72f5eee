import type { UploadItem } from "./upload";

export interface DroppedFiles {
  items: UploadItem[];
  /** Whether a folder was dropped (its files are uploaded like a folder upload). */
  folders: boolean;
}

function readEntries(reader: FileSystemDirectoryReader): Promise<FileSystemEntry[]> {
  return new Promise((resolve, reject) => reader.readEntries(resolve, reject));
}

function entryFile(entry: FileSystemFileEntry): Promise<File> {
  return new Promise((resolve, reject) => entry.file(resolve, reject));
}

async function walk(entry: FileSystemEntry, prefix: string, out: UploadItem[]): Promise<void> {
  const path = prefix ? `${prefix}/${entry.name}` : entry.name;
  if (entry.isFile) {
    out.push({ file: await entryFile(entry as FileSystemFileEntry), relativePath: path, overwrite: true });
    return;
  }
  if (!entry.isDirectory) return;
  const reader = (entry as FileSystemDirectoryEntry).createReader();
  // readEntries answers in batches until it returns none.
  for (;;) {
    const batch = await readEntries(reader);
    if (batch.length === 0) break;
    for (const child of batch) await walk(child, path, out);
  }
}

/**
 * The files of a drop. Plain files keep their name (and ask before overwriting); a dropped
 * folder is walked, and its files go to `<folder>/<path inside it>` with overwrite, as in a
 * folder upload. Must be called while the drop event is being handled.
 */
export function droppedFiles(data: DataTransfer): Promise<DroppedFiles> {
  const entries: FileSystemEntry[] = [];
  const items = data.items ? Array.from(data.items) : [];
  for (const item of items) {
    if (item.kind !== "file") continue;
    const entry = typeof item.webkitGetAsEntry === "function" ? item.webkitGetAsEntry() : null;
    if (entry) entries.push(entry);
  }
  if (entries.length === 0 || !entries.some((entry) => entry.isDirectory)) {
    const files = Array.from(data.files ?? []);
    return Promise.resolve({ items: files.map((file) => ({ file, relativePath: file.name })), folders: false });
  }
  return (async () => {
    const out: UploadItem[] = [];
    for (const entry of entries) {
      if (entry.isDirectory) await walk(entry, "", out);
      else if (entry.isFile) {
        out.push({ file: await entryFile(entry as FileSystemFileEntry), relativePath: entry.name });
      }
    }
    return { items: out, folders: true };
  })();
}
