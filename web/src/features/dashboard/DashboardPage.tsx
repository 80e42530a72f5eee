import { useQuery } from "@tanstack/react-query";
import { Link } from "react-router";
import { errorMessage } from "../../api/errors";
import type { SystemInfo } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { formatTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { useCan } from "../auth/permissions";
import { AttentionList, Headline, StackBreakdown } from "./FleetSections";
import { HostCards } from "./HostCards";
import { fleetQueryOptions, systemInfoQueryOptions } from "./queries";

function DockerValue({ docker }: { docker: SystemInfo["docker"] }) {
  if (!docker.reachable) {
    return (
      <span className="status tone-bad">
        Unreachable{docker.error ? `: ${docker.error}` : ""}
      </span>
    );
  }
  return (
    <span className="status tone-good">
      {docker.version ?? "unknown version"}
      {docker.api_version && <span className="muted"> (API {docker.api_version})</span>}
    </span>
  );
}

function SystemInfoList({ info }: { info: SystemInfo }) {
  return (
    <dl className="facts">
      <dt>Stackyard</dt>
      <dd>{info.version}</dd>
      <dt>Docker engine</dt>
      <dd>
        <DockerValue docker={info.docker} />
      </dd>
      <dt>Docker Compose</dt>
      <dd>{info.compose.version ?? <span className="status tone-bad">Not found</span>}</dd>
      <dt>JSON progress</dt>
      <dd>{info.compose.json_progress ? "Supported" : "Not supported (plain text progress)"}</dd>
      <dt>Stacks folder</dt>
      <dd>
        <code>{info.stacks_dir}</code>
      </dd>
    </dl>
  );
}

/** This host's engine, compose and stacks folder (what the fleet cards do not say). */
function SystemCard() {
  const info = useQuery(systemInfoQueryOptions());
  return (
    <section className="card" aria-labelledby="system-title">
      <h2 id="system-title">System</h2>
      <p className="muted small">This host's Docker engine, Compose and stacks folder.</p>
      {info.data ? (
        <SystemInfoList info={info.data} />
      ) : info.isError ? (
        <ErrorBanner error={info.error} onRetry={() => void info.refetch()} />
      ) : (
        <Loading />
      )}
    </section>
  );
}

/** No stack on any host yet: where to begin, for those who may make one. */
function FirstStack() {
  const mayCreate = useCan("stacks.create");
  return (
    <section className="card first-stack" aria-labelledby="first-stack-title">
      <h2 id="first-stack-title">No stacks yet</h2>
      <p className="muted">
        {mayCreate
          ? "Write a compose file, paste one, or convert a docker run command; or put a folder with a compose file in the stacks folder."
          : "An admin makes stacks here, or puts a folder with a compose file in the stacks folder."}
      </p>
      {mayCreate && (
        <Link className="button primary" to="/stacks?new=1">
          New stack
        </Link>
      )}
    </section>
  );
}

/**
 * The fleet: what needs attention first, then the headline figures, stacks by state and a
 * card per host; read again every 15 s. When the fleet cannot be read and nothing was read
 * before, the error (the server's detail) with Retry; when an earlier payload is shown, a
 * line says it could not be refreshed.
 */
export function DashboardPage() {
  const fleet = useQuery(fleetQueryOptions());
  const retry = () => void fleet.refetch();
  return (
    <main className="page dashboard">
      <div className="page-head">
        <h1>Dashboard</h1>
        {fleet.data && (
          <p className="muted small updated-at">
            Updated <time dateTime={fleet.data.generated_at}>{formatTime(fleet.data.generated_at)}</time>, every 15 s
          </p>
        )}
      </div>
      {fleet.data ? (
        <>
          {fleet.isError && (
            <p className="error small stale-note" role="alert">
              Could not refresh: {errorMessage(fleet.error)}{" "}
              <button type="button" className="link-button" onClick={retry}>
                Retry
              </button>
            </p>
          )}
          {fleet.data.kpis.stacks === 0 && <FirstStack />}
          <AttentionList items={fleet.data.attention} />
          <Headline kpis={fleet.data.kpis} />
          <HostCards hosts={fleet.data.hosts} />
        </>
      ) : fleet.isError ? (
        <ErrorBanner error={fleet.error} onRetry={retry} />
      ) : (
        <Loading label="Reading the fleet…" />
      )}
      <div className="grid dashboard-grid">
        {fleet.data && <StackBreakdown breakdown={fleet.data.breakdown} />}
        <SystemCard />
      </div>
    </main>
  );
}
