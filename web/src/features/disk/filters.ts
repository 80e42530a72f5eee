import type { DiskImage, DiskNetwork, DiskReport, DiskUser, DiskVolume, PruneKind } from "../../api/types";
import { shortDigest } from "../../components/format";

/** Which objects a table shows: all, those nothing uses, or (images) the untagged ones. */
export type Show = "all" | "unused" | "dangling";

export interface Filter {
  show: Show;
  /** Only the objects of this stack (used by it, or made for it); "" for every one. */
  stack: string;
}

export const NO_FILTER: Filter = { show: "all", stack: "" };

/** A stack's id as the server writes it (a compose project whose folder is gone is named in a sentence). */
const STACK_ID = /^[a-z0-9][a-z0-9_-]*$/;

/** Whether `stack` (a name from the disk report) is a stack of the host, whose page a link can show. */
export function isStackId(stack: string): boolean {
  return STACK_ID.test(stack);
}

function usedByStack(users: readonly DiskUser[], stack: string): boolean {
  return users.some((user) => user.stack === stack);
}

export function imageShown(image: DiskImage, filter: Filter): boolean {
  if (filter.show === "unused" && image.used_by.length > 0) return false;
  if (filter.show === "dangling" && !image.dangling) return false;
  return !filter.stack || usedByStack(image.used_by, filter.stack);
}

export function volumeShown(volume: DiskVolume, filter: Filter): boolean {
  if (filter.show !== "all" && volume.used_by.length > 0) return false;
  return !filter.stack || volume.stack === filter.stack || usedByStack(volume.used_by, filter.stack);
}

export function networkShown(network: DiskNetwork, filter: Filter): boolean {
  if (filter.show !== "all" && network.used_by.length > 0) return false;
  return !filter.stack || network.stack === filter.stack || usedByStack(network.used_by, filter.stack);
}

/** Every stack the report names (that uses something, or that something was made for), sorted. */
export function stacksOf(report: DiskReport): string[] {
  const stacks = new Set<string>();
  const add = (stack: string | null | undefined) => {
    if (stack) stacks.add(stack);
  };
  for (const image of report.images) image.used_by.forEach((user) => add(user.stack));
  for (const volume of [...report.volumes, ...report.networks]) {
    add(volume.stack);
    volume.used_by.forEach((user) => add(user.stack));
  }
  return [...stacks].sort();
}

/** `nginx:1.25` -> `nginx`: a tag or a digest cut off, a registry's port kept (the server's `repository_of`). */
export function repositoryOf(reference: string): string {
  const name = reference.split("@", 1)[0] ?? reference;
  const colon = name.lastIndexOf(":");
  if (colon <= 0) return name;
  return name.slice(colon + 1).includes("/") ? name : name.slice(0, colon);
}

/**
 * The repositories of the images the host's stacks use or name (stopped ones too): the
 * images of these an operator may remove. The server decides (it also knows the
 * repositories a stack names that have no image here); this only hides what it would refuse.
 */
export function stackRepositories(images: readonly DiskImage[]): Set<string> {
  return new Set(
    images.filter((image) => image.used_by.some((user) => user.stack)).flatMap((image) => image.tags.map(repositoryOf)),
  );
}

/** Whether an image is of one of `repositories` (by any of its tags). */
export function ofRepositories(image: DiskImage, repositories: ReadonlySet<string>): boolean {
  return image.tags.some((tag) => repositories.has(repositoryOf(tag)));
}

/** An image as a person names it: its first tag, or its short id when it has none. */
export function imageName(image: DiskImage): string {
  return image.tags[0] ?? shortDigest(image.id);
}

/** The kinds of object a prune takes, in the order the page lists them, by their names. */
export const KIND_LABELS: Record<PruneKind, string> = {
  image: "Images",
  container: "Containers",
  volume: "Volumes",
  network: "Networks",
  build_cache: "Build cache",
};

export const KINDS = Object.keys(KIND_LABELS) as PruneKind[];

/** "1 image", "2 volumes": a kind and a count in words. */
export function countOf(kind: PruneKind, count: number): string {
  const one: Record<PruneKind, string> = {
    image: "image",
    container: "container",
    volume: "volume",
    network: "network",
    build_cache: "build cache entry",
  };
  const many: Record<PruneKind, string> = {
    image: "images",
    container: "containers",
    volume: "volumes",
    network: "networks",
    build_cache: "build cache entries",
  };
  return `${count} ${count === 1 ? one[kind] : many[kind]}`;
}
