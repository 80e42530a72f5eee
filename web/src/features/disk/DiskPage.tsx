import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { useCan } from "../auth/permissions";
import { useHostInfo } from "../hosts/capabilities";
import { useHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import "./disk.css";
import { DiskFigures } from "./DiskFigures";
import { DiskTabs } from "./DiskTabs";
import { PruneDialog } from "./PruneDialog";
import { PruneHistory } from "./PruneHistory";
import { PullForm } from "./PullForm";
import { diskQueryOptions } from "./queries";

/** The disk of the host chosen with the host switcher (`?host=`), made anew for each host. */
export function DiskPage() {
  const host = useHost();
  return <HostDisk key={String(host)} />;
}

/**
 * What takes room on a host and what uses it: the summary, then images, volumes, networks,
 * containers of no stack and build cache; everyone sees it. Operators pull and remove the
 * images of their stacks' repositories; admins remove any image, volume or network and
 * prune, after a preview of exactly what goes. The host's last prunes below.
 */
function HostDisk() {
  const host = useHost();
  const info = useHostInfo(host);
  const unavailable = info.unavailable("disk");
  const usable = info.ready && !unavailable;
  const report = useQuery({ ...diskQueryOptions(host), enabled: usable });
  const mayPrune = useCan("disk.manage") && usable;
  const mayPull = useCan("disk.stackImages") && usable;
  const [pruning, setPruning] = useState(false);
  const hostName = host === null ? "this host" : info.name;

  return (
    <main className="page page-wide disk-page">
      <div className="page-head">
        <h1>Disk</h1>
        <div className="page-tools">
          <HostSwitcher page="/disk" />
          {usable && (
            <button type="button" disabled={report.isFetching} onClick={() => void report.refetch()}>
              {report.isFetching ? "Measuring…" : "Measure again"}
            </button>
          )}
          {mayPrune && (
            <button type="button" onClick={() => setPruning(true)}>
              Prune…
            </button>
          )}
        </div>
      </div>
      <HostNote info={info} />
      <p className="muted">
        What Docker keeps on {hostName}: images, containers, volumes, networks and build cache, how much room each takes
        and what uses it. A prune shows every object it would remove before it removes anything.
      </p>
      {unavailable ? (
        <HostUnavailable reason={unavailable} />
      ) : report.isError ? (
        <ErrorBanner error={report.error} onRetry={() => void report.refetch()} />
      ) : !report.data ? (
        <Loading label="Measuring the disk…" />
      ) : (
        <>
          <DiskFigures summary={report.data.summary} />
          {mayPull && <PullForm />}
          <DiskTabs report={report.data} />
        </>
      )}
      {!unavailable && <PruneHistory enabled={usable} />}
      {pruning && <PruneDialog hostName={hostName} onClose={() => setPruning(false)} />}
    </main>
  );
}
