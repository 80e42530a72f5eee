import { useId, useState, type KeyboardEvent, type ReactNode } from "react";
import { useSearchParams } from "react-router";
import type { DiskReport } from "../../api/types";
import {
  imageShown,
  networkShown,
  NO_FILTER,
  stacksOf,
  volumeShown,
  type Filter,
  type Show,
} from "./filters";
import { ImagesTable } from "./ImagesTable";
import { BuildCacheTable, ContainersTable, NetworksTable } from "./OtherTables";
import { VolumesTable } from "./VolumesTable";

export type Tab = "images" | "volumes" | "networks" | "containers" | "build-cache";

const TABS: readonly Tab[] = ["images", "volumes", "networks", "containers", "build-cache"];

const TAB_LABELS: Record<Tab, string> = {
  images: "Images",
  volumes: "Volumes",
  networks: "Networks",
  containers: "Containers of no stack",
  "build-cache": "Build cache",
};

/** The address's parameter that names the tab shown (so that a reload or a link keeps it). */
const TAB_PARAM = "tab";

function parseTab(value: string | null): Tab {
  return TABS.find((tab) => tab === value) ?? "images";
}

const SHOW_LABELS: Record<Show, string> = { all: "Everything", unused: "Unused only", dangling: "Dangling only" };

function Filters({
  filter,
  onChange,
  choices,
  stacks,
  shown,
  total,
}: {
  filter: Filter;
  onChange: (filter: Filter) => void;
  choices: readonly Show[];
  stacks: readonly string[];
  shown: number;
  total: number;
}) {
  return (
    <div className="disk-filters" role="group" aria-label="Filters">
      <label className="field inline">
        <span>Show</span>
        <select value={filter.show} onChange={(e) => onChange({ ...filter, show: e.target.value as Show })}>
          {choices.map((show) => (
            <option key={show} value={show}>
              {SHOW_LABELS[show]}
            </option>
          ))}
        </select>
      </label>
      <label className="field inline">
        <span>Stack</span>
        <select value={filter.stack} onChange={(e) => onChange({ ...filter, stack: e.target.value })}>
          <option value="">Any</option>
          {stacks.map((stack) => (
            <option key={stack} value={stack}>
              {stack}
            </option>
          ))}
        </select>
      </label>
      <span className="muted small" role="status">
        {shown} of {total}
      </span>
    </div>
  );
}

/** A table, or why there is none: nothing of the kind on the host, or nothing the filters let through. */
function Listing({ total, shown, what, children }: { total: number; shown: number; what: string; children: ReactNode }) {
  if (total === 0) return <p className="muted">No {what} on this host.</p>;
  if (shown === 0) return <p className="muted">No {what} match these filters.</p>;
  return <>{children}</>;
}

/**
 * The host's images, volumes, networks, containers of no stack and build cache, a tab each
 * (the one shown is in the address); images, volumes and networks filtered by use
 * (unused, dangling) and by stack, each tab's filters its own.
 */
export function DiskTabs({ report }: { report: DiskReport }) {
  const [params, setParams] = useSearchParams();
  const shown = parseTab(params.get(TAB_PARAM));
  const [filters, setFilters] = useState<Record<"images" | "volumes" | "networks", Filter>>({
    images: NO_FILTER,
    volumes: NO_FILTER,
    networks: NO_FILTER,
  });
  const baseId = useId();
  const stacks = stacksOf(report);

  const counts: Record<Tab, number> = {
    images: report.images.length,
    volumes: report.volumes.length,
    networks: report.networks.length,
    containers: report.containers.length,
    "build-cache": report.build_cache.length,
  };

  function choose(tab: Tab) {
    setParams(
      (now) => {
        const next = new URLSearchParams(now);
        if (tab === "images") next.delete(TAB_PARAM);
        else next.set(TAB_PARAM, tab);
        return next;
      },
      { replace: true },
    );
  }

  function onKeyDown(event: KeyboardEvent<HTMLDivElement>) {
    // Arrow keys move between the tabs (the tab list is one stop of the Tab key).
    if (event.key !== "ArrowLeft" && event.key !== "ArrowRight") return;
    event.preventDefault();
    const next = TABS[(TABS.indexOf(shown) + (event.key === "ArrowRight" ? 1 : TABS.length - 1)) % TABS.length];
    if (!next) return;
    choose(next);
    document.getElementById(`${baseId}-${next}-tab`)?.focus();
  }

  const filterOf = (tab: "images" | "volumes" | "networks") => ({
    filter: filters[tab],
    onChange: (filter: Filter) => setFilters({ ...filters, [tab]: filter }),
    stacks,
  });

  let panel: ReactNode;
  if (shown === "images") {
    const images = report.images.filter((image) => imageShown(image, filters.images));
    panel = (
      <>
        <Filters {...filterOf("images")} choices={["all", "unused", "dangling"]} shown={images.length} total={counts.images} />
        <Listing total={counts.images} shown={images.length} what="images">
          <ImagesTable images={images} all={report.images} />
        </Listing>
      </>
    );
  } else if (shown === "volumes") {
    const volumes = report.volumes.filter((volume) => volumeShown(volume, filters.volumes));
    panel = (
      <>
        <Filters {...filterOf("volumes")} choices={["all", "unused"]} shown={volumes.length} total={counts.volumes} />
        <Listing total={counts.volumes} shown={volumes.length} what="volumes">
          <VolumesTable volumes={volumes} />
        </Listing>
      </>
    );
  } else if (shown === "networks") {
    const networks = report.networks.filter((network) => networkShown(network, filters.networks));
    panel = (
      <>
        <Filters {...filterOf("networks")} choices={["all", "unused"]} shown={networks.length} total={counts.networks} />
        <Listing total={counts.networks} shown={networks.length} what="networks">
          <NetworksTable networks={networks} />
        </Listing>
      </>
    );
  } else if (shown === "containers") {
    panel = (
      <Listing total={counts.containers} shown={counts.containers} what="containers outside stacks">
        <ContainersTable containers={report.containers} />
      </Listing>
    );
  } else {
    panel = (
      <Listing total={counts["build-cache"]} shown={counts["build-cache"]} what="build cache">
        <BuildCacheTable entries={report.build_cache} />
      </Listing>
    );
  }

  return (
    <section className="card disk-tabs-card" aria-label="What takes room">
      <div className="console-tabs disk-tabs" role="tablist" aria-label="What the disk holds" onKeyDown={onKeyDown}>
        {TABS.map((tab) => (
          <button
            key={tab}
            type="button"
            role="tab"
            id={`${baseId}-${tab}-tab`}
            aria-selected={shown === tab}
            aria-controls={`${baseId}-panel`}
            tabIndex={shown === tab ? 0 : -1}
            onClick={() => choose(tab)}
          >
            {TAB_LABELS[tab]} <span className="count">{counts[tab]}</span>
          </button>
        ))}
      </div>
      <div role="tabpanel" id={`${baseId}-panel`} aria-labelledby={`${baseId}-${shown}-tab`}>
        {panel}
      </div>
    </section>
  );
}
