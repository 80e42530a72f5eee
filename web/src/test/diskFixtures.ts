import type {
  DiskImage,
  DiskNetwork,
  DiskReport,
  DiskSummary,
  DiskVolume,
  PrunePreview,
  PruneReport,
} from "../api/types";

const MB = 1_000_000;

export function makeDiskSummary(overrides: Partial<DiskSummary> = {}): DiskSummary {
  return {
    images: 1_250 * MB,
    images_count: 4,
    containers: 12 * MB,
    containers_count: 3,
    volumes: 340 * MB,
    volumes_count: 3,
    build_cache: 56 * MB,
    reclaimable: 410 * MB,
    measured_at: "2026-03-01T10:00:00Z",
    ...overrides,
  };
}

export function makeImage(overrides: Partial<DiskImage> = {}): DiskImage {
  return {
    id: "sha256:1111111111111111111111111111111111111111111111111111111111111111",
    tags: ["nginx:1.27"],
    created: "2026-02-01T08:00:00Z",
    size: 190 * MB,
    shared: 80 * MB,
    unique: 110 * MB,
    dangling: false,
    used_by: [{ stack: "web", service: "proxy", container: "web-proxy-1" }],
    protected: "an image of web/proxy",
    ...overrides,
  };
}

export function makeVolume(overrides: Partial<DiskVolume> = {}): DiskVolume {
  return {
    name: "web_data",
    driver: "local",
    created: "2026-01-05T09:00:00Z",
    size: 300 * MB,
    anonymous: false,
    stack: "web",
    used_by: [{ stack: "web", service: "proxy", container: "web-proxy-1" }],
    protected: "a volume of the stack web",
    ...overrides,
  };
}

export function makeNetwork(overrides: Partial<DiskNetwork> = {}): DiskNetwork {
  return {
    id: "5555555555555555555555555555555555555555555555555555555555555555",
    name: "web_default",
    driver: "bridge",
    created: "2026-01-05T09:00:00Z",
    stack: "web",
    used_by: [{ stack: "web", service: "proxy", container: "web-proxy-1" }],
    protected: "a network of the stack web",
    ...overrides,
  };
}

/** A host with a stack's image, volume and network, an old tag, a dangling image, loose objects. */
export function makeDiskReport(overrides: Partial<DiskReport> = {}): DiskReport {
  return {
    summary: makeDiskSummary(),
    images: [
      makeImage(),
      makeImage({
        id: "sha256:2222222222222222222222222222222222222222222222222222222222222222",
        tags: ["nginx:1.25"],
        used_by: [],
        protected: null,
        size: 180 * MB,
        unique: 100 * MB,
      }),
      makeImage({
        id: "sha256:3333333333333333333333333333333333333333333333333333333333333333",
        tags: [],
        dangling: true,
        used_by: [],
        protected: null,
        size: 40 * MB,
        shared: 0,
        unique: 40 * MB,
      }),
      makeImage({
        id: "sha256:4444444444444444444444444444444444444444444444444444444444444444",
        tags: ["adminer:4"],
        used_by: [{ stack: null, service: null, container: "adminer" }],
        protected: null,
      }),
    ],
    volumes: [
      makeVolume(),
      makeVolume({
        name: "f".repeat(64),
        anonymous: true,
        stack: null,
        used_by: [],
        protected: null,
        size: 40 * MB,
      }),
      makeVolume({ name: "old_cache", stack: "old (its folder is gone)", used_by: [], protected: "a volume of the stack old (its folder is gone)" }),
    ],
    networks: [
      makeNetwork(),
      makeNetwork({ id: "6".repeat(64), name: "loose-net", stack: null, used_by: [], protected: null }),
      makeNetwork({ id: "7".repeat(64), name: "bridge", stack: null, used_by: [], protected: "the engine's own" }),
    ],
    containers: [
      { id: "c1", name: "adminer", image: "adminer:4", state: "running", size: 2 * MB, protected: null },
      { id: "c2", name: "leftover", image: "busybox:1", state: "exited", size: 10 * MB, protected: null },
    ],
    build_cache: [
      {
        id: "bc1",
        kind: "regular",
        description: "RUN apt-get install -y curl",
        size: 56 * MB,
        in_use: false,
        shared: false,
        last_used: "2026-02-20T12:00:00Z",
      },
    ],
    ...overrides,
  };
}

export function makePreview(overrides: Partial<PrunePreview> = {}): PrunePreview {
  return {
    options: { images: "dangling", containers: true, networks: true, build_cache: true, volumes: "none" },
    items: [
      { kind: "image", id: "sha256:3333333333333333333333333333333333333333333333333333333333333333", name: "333333333333", bytes: 40 * MB },
      { kind: "container", id: "c2", name: "leftover", bytes: 10 * MB },
      { kind: "network", id: "6".repeat(64), name: "loose-net", bytes: 0 },
    ],
    bytes: { image: 40 * MB, container: 10 * MB, network: 0, build_cache: 0, volume: 0 },
    total: 50 * MB,
    kept: [{ kind: "network", id: "5".repeat(64), name: "web_default", reason: "a network of the stack web" }],
    ...overrides,
  };
}

export function makePruneReport(overrides: Partial<PruneReport> = {}): PruneReport {
  return {
    removed: makePreview().items.slice(0, 2),
    freed: { image: 40 * MB, container: 10 * MB },
    total: 50 * MB,
    left: [{ kind: "network", id: "6".repeat(64), name: "loose-net", reason: "a container uses it now" }],
    at: "2026-03-01T10:05:00Z",
    origin: "by alice",
    ...overrides,
  };
}
