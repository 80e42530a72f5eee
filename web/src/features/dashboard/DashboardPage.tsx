import { useQuery } from "@tanstack/react-query";
import type { SystemInfo } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { systemInfoQueryOptions } from "./queries";

function DockerValue({ docker }: { docker: SystemInfo["docker"] }) {
  if (!docker.reachable) {
    return (
      <span className="status status-bad">
        Unreachable{docker.error ? `: ${docker.error}` : ""}
      </span>
    );
  }
  return (
    <span className="status status-good">
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
      <dd>{info.compose.version ?? <span className="status status-bad">Not found</span>}</dd>
      <dt>JSON progress</dt>
      <dd>{info.compose.json_progress ? "Supported" : "Not supported (plain text progress)"}</dd>
      <dt>Stacks folder</dt>
      <dd>
        <code>{info.stacks_dir}</code>
      </dd>
    </dl>
  );
}

function SystemCard() {
  const info = useQuery(systemInfoQueryOptions());
  return (
    <section className="card" aria-labelledby="system-title">
      <h2 id="system-title">System</h2>
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

export function DashboardPage() {
  return (
    <main className="page">
      <h1>Dashboard</h1>
      <div className="grid">
        <SystemCard />
        <section className="card" aria-labelledby="fleet-title">
          <h2 id="fleet-title">Fleet</h2>
          <p className="muted">
            The fleet dashboard is coming: stacks that need attention, headline numbers and resource use across this host
            and every agent.
          </p>
        </section>
      </div>
    </main>
  );
}
