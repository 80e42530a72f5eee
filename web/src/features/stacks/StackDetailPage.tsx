import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { ApiError } from "../../api/errors";
import type { StackDetail, StackService } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { useHostInfo, type HostCapability } from "../hosts/capabilities";
import { useHost, withHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import { BackupDialog } from "../backups/BackupDialog";
import { LogsCard } from "../containers/LogsCard";
import { UsageCard } from "../containers/UsageCard";
import { DeployConsole } from "./DeployConsole";
import { DeleteStackCard } from "./DeleteStack";
import { PortList } from "./PortList";
import { stackQueryOptions, stackUpdatesQueryOptions } from "./queries";
import { StackActions } from "./StackActions";
import { ReadOnlyStackFile, SecretsEditor, StackFileEditor } from "./StackFiles";
import { BusyIndicator, StateBadge } from "./StackStatus";
import { StackUpdatesCard } from "./StackUpdatesCard";
import { StackUpdatePill } from "./UpdatePill";

function ServiceRows({ stackId, service, mayShell }: { stackId: string; service: StackService; mayShell: boolean }) {
  const host = useHost();
  if (service.containers.length === 0) {
    return (
      <tr>
        <th scope="row">{service.name}</th>
        <td colSpan={mayShell ? 6 : 5} className="muted">
          No container{service.image ? ` (image ${service.image})` : ""}
        </td>
      </tr>
    );
  }
  return (
    <>
      {service.containers.map((c, i) => (
        <tr key={c.name}>
          {i === 0 && (
            <th scope="row" rowSpan={service.containers.length}>
              {service.name}
            </th>
          )}
          <td>
            <code>{c.name}</code>
          </td>
          <td>
            <span className={c.state === "running" ? "status tone-good" : "status tone-bad"}>{c.state}</span>
            <div className="muted small">{c.status}</div>
          </td>
          <td>
            {c.health ? (
              <span className={c.health === "healthy" ? "status tone-good" : "status tone-bad"}>{c.health}</span>
            ) : (
              <span className="muted">—</span>
            )}
          </td>
          <td className="detail">
            <code>{c.image}</code>
          </td>
          <td>
            <PortList ports={c.ports} />
          </td>
          {mayShell && (
            <RowActions>
              {c.state === "running" && (
                <Link
                  className="button"
                  to={withHost(`/stacks/${encodeURIComponent(stackId)}/shell/${encodeURIComponent(c.name)}`, host)}
                  aria-label={`Shell in ${c.name}`}
                >
                  Shell
                </Link>
              )}
            </RowActions>
          )}
        </tr>
      ))}
    </>
  );
}

const SERVICE_COLUMNS = ["Service", "Container", "State", "Health", "Image", "Ports"] as const;

/** `withShell`: the host offers container shells (the user's role is checked here). */
function ServicesCard({ stack, withShell }: { stack: StackDetail; withShell: boolean }) {
  const mayShell = useCan("stacks.shell") && withShell;
  return (
    <section className="card" aria-labelledby="services-title">
      <h2 id="services-title">Services</h2>
      {stack.services.length === 0 ? (
        <p className="muted">No services{stack.state === "invalid" ? " (the compose file does not resolve)" : ""}.</p>
      ) : (
        <Table label="Services" columns={SERVICE_COLUMNS} actions={mayShell}>
          {stack.services.map((service) => (
            <ServiceRows key={service.name} stackId={stack.id} service={service} mayShell={mayShell} />
          ))}
        </Table>
      )}
    </section>
  );
}

/** The breadcrumb back to the host's stacks, and the host switcher (to another host's stacks). */
function StackTrail() {
  const host = useHost();
  return (
    <div className="host-bar">
      <p className="breadcrumb">
        <Link to={withHost("/stacks", host)}>Stacks</Link> /
      </p>
      <HostSwitcher page="/stacks" />
    </div>
  );
}

export function StackDetailPage() {
  const { id = "" } = useParams();
  const host = useHost();
  const info = useHostInfo(host);
  const unavailable = info.unavailable("stacks");
  const has = (capability: HostCapability) => info.unavailable(capability) === null;
  const mayEditFiles = useCan("stacks.editFiles");
  const mayDelete = useCan("stacks.delete");
  const mayReadLogs = useCan("stacks.logs") && has("logs");
  const mayBackUp = useCan("backups.create") && has("backups");
  const [backingUp, setBackingUp] = useState(false);
  const usable = info.ready && !unavailable;
  const stack = useQuery({ ...stackQueryOptions(host, id), enabled: usable });
  const updates = useQuery({ ...stackUpdatesQueryOptions(host), enabled: usable && has("updates") });
  const update = updates.data?.stacks.find((u) => u.stack === id);

  if (!stack.data) {
    const notFound = stack.error instanceof ApiError && stack.error.status === 404;
    return (
      <main className="page">
        <StackTrail />
        <h1>{id}</h1>
        <HostNote info={info} />
        {unavailable ? (
          <HostUnavailable reason={unavailable} />
        ) : stack.isError ? (
          <ErrorBanner error={stack.error} onRetry={notFound ? undefined : () => void stack.refetch()} />
        ) : (
          <Loading />
        )}
      </main>
    );
  }

  const data = stack.data;
  return (
    <main className="page stack-page">
      <StackTrail />
      <div className="page-head title-row">
        <h1>{data.id}</h1>
        <div className="page-tools">
          <StateBadge state={data.state} error={data.error} />
          <StackUpdatePill update={update} />
          {data.busy && <BusyIndicator action={data.busy} />}
        </div>
      </div>
      <HostNote info={info} />
      {stack.isError && <ErrorBanner error={stack.error} onRetry={() => void stack.refetch()} />}
      {data.error && (
        <div className="error-banner" role="alert">
          <pre className="error-detail">{data.error}</pre>
        </div>
      )}
      <div className="stack-tools">
        <StackActions stack={data} hasUpdate={update?.has_update} />
        {mayBackUp && (
          <button type="button" onClick={() => setBackingUp(true)} disabled={Boolean(data.busy) || data.state === "invalid"}>
            Back up
          </button>
        )}
      </div>
      {backingUp && <BackupDialog stackId={data.id} onClose={() => setBackingUp(false)} />}
      {/* On wide screens the files sit beside the rest, the compose editor in view (styles.css). */}
      <div className="stack-columns">
        <DeployConsole stackId={data.id} busy={data.busy} />
        <ServicesCard stack={data} withShell={has("shell")} />
        {has("usage") && (
          <UsageCard
            stackId={data.id}
            containers={data.services.flatMap((s) =>
              s.containers.map((c) => ({ name: c.name, running: c.state === "running" })),
            )}
          />
        )}
        {mayReadLogs && (
          <LogsCard
            stackId={data.id}
            sources={data.services.map((s) => ({ service: s.name, containers: s.containers.map((c) => c.name) }))}
          />
        )}
        {has("updates") && <StackUpdatesCard stackId={data.id} update={update} lastCheck={updates.data?.last_check} />}
        <section className="card stack-files" aria-labelledby="files-title">
          <h2 id="files-title">Files</h2>
          {mayEditFiles ? (
            <StackFileEditor stackId={data.id} kind="compose" label={data.compose_file} content={data.compose} />
          ) : (
            <ReadOnlyStackFile
              label={data.compose_file}
              content={data.compose}
              note="Read only: compose files can mount any host path, so only admins edit them."
            />
          )}
          <h3>Environment</h3>
          {mayEditFiles && data.env !== null ? (
            <StackFileEditor stackId={data.id} kind="env" label=".env" content={data.env} />
          ) : (
            <p className="muted">The .env file is shown to admins only.</p>
          )}
          {mayEditFiles && (
            <>
              <h3>Secrets</h3>
              <SecretsEditor stackId={data.id} hasSecrets={data.has_secrets} />
            </>
          )}
        </section>
      </div>
      {mayDelete && <DeleteStackCard stackId={data.id} />}
    </main>
  );
}
