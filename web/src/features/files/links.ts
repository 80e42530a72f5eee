import type { HostId } from "../../api/hosts";
import { withHost } from "../hosts/host";
import { baseName } from "./paths";

/**
 * The Files page at `folder`, with `edit` open in the editor, on `host`:
 * `/files?path=a/b&edit=a/b/x.yml` (and `&host=3` on agent 3).
 */
export function filesHref(folder: string, edit?: string | null, host: HostId = null): string {
  const query: string[] = [];
  const encode = (value: string) => encodeURIComponent(value).replace(/%2F/g, "/");
  if (folder) query.push(`path=${encode(folder)}`);
  if (edit) query.push(`edit=${encode(edit)}`);
  return withHost(query.length ? `/files?${query.join("&")}` : "/files", host);
}

/** "the stacks folder" or "a/b", for messages. */
export function folderLabel(path: string): string {
  return path ? path : "the stacks folder";
}

/** What a folder's download is called: `<name>.zip` (`stacks.zip` for the root). */
export function zipName(folder: string): string {
  return `${baseName(folder) || "stacks"}.zip`;
}

/** Whether `path` is `root` or inside it. */
export function isWithin(path: string, root: string): boolean {
  return path === root || path.startsWith(`${root}/`);
}
