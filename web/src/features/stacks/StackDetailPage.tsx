import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useParams } from "react-router";
import { ApiError } from "../../api/errors";
import type { StackDetail, StackService } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { Cell, Row, RowActions, Table, useFoldedColumns } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { useHostInfo, type HostCapability } from "../hosts/capabilities";
import { useHost, withHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import { BackupDialog } from "../backups/BackupDialog";
import { UsageCard } from "../containers/UsageCard";
import { AdoptDialog } from "../git/AdoptDialog";
import { GitFilesBanner, readOnlyFromGit } from "../git/GitFilesBanner";
import { GitStackCard } from "../git/GitStackCard";
import { useGitAdmin } from "../git/permissions";
import { gitStackQueryOptions } from "../git/queries";
import { DeleteStackCard } from "./DeleteStack";
import { PortList } from "./PortList";
import { stackQueryOptions, stackUpdatesQueryOptions } from "./queries";
import { StackConsole } from "./StackConsole";
import { StackActions } from "./StackActions";
import { ReadOnlyStackFile, SecretsEditor, StackFileEditor } from "./StackFiles";
import { healthTone } from "./state";
import { BusyIndicator, StateBadge } from "./StackStatus";
import { StackUpdatesCard } from "./StackUpdatesCard";
import { StackUpdatePill } from "./UpdatePill";

const SERVICE_COLUMNS = ["Service", "State", "Image", "Ports"] as const;

/** One row per container: its service and name, state and health, image, ports and shell. */
function ServiceRows({ stackId, service, mayShell }: { stackId: string; service: StackService; mayShell: boolean }) {
  const host = useHost();
  const folded = useFoldedColumns();
  if (service.containers.length === 0) {
    return (
      <Row>
        <th scope="row">{service.name}</th>
        <td colSpan={SERVICE_COLUMNS.length - 1 - folded.size + (mayShell ? 1 : 0)} className="muted">
          No container{service.image ? ` (image ${service.image})` : ""}
        </td>
      </Row>
    );
  }
  return (
    <>
      {service.containers.map((c) => (
        <Row key={c.name}>
          <th scope="row">
            {service.name}
            <div className="row-sub">
              <code>{c.name}</code>
            </div>
          </th>
          <td>
            <span className={c.state === "running" ? "status tone-good" : "status tone-bad"}>{c.state}</span>
            {c.health && (
              <>
                {" · "}
                <span className={`status tone-${healthTone(c.health)}`}>{c.health}</span>
              </>
            )}
            <div className="muted small">{c.status}</div>
          </td>
          <Cell column="Image" className="detail">
            <code>{c.image}</code>
          </Cell>
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
        </Row>
      ))}
    </>
  );
}

/** `withShell`: the host offers container shells (the user's role is checked here). */
function ServicesCard({ stack, withShell }: { stack: StackDetail; withShell: boolean }) {
  const mayShell = useCan("stacks.shell") && withShell;
  return (
    <section className="card" aria-labelledby="services-title">
      <h2 id="services-title">Services</h2>
      {stack.services.length === 0 ? (
        <p className="muted">No services{stack.state === "invalid" ? " (the compose file does not resolve)" : ""}.</p>
      ) : (
        <Table label="Services" columns={SERVICE_COLUMNS} actions={mayShell} fold={["Image"]}>
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
  const mayAdopt = useGitAdmin();
  const [backingUp, setBackingUp] = useState(false);
  const [adopting, setAdopting] = useState(false);
  const usable = info.ready && !unavailable;
  const stack = useQuery({ ...stackQueryOptions(host, id), enabled: usable });
  // Null: not from git. Its files are shown once that is known (read-only when from git).
  const git = useQuery({ ...gitStackQueryOptions(host, id), enabled: usable });
  const gitView = git.data ?? null;
  const gitKnown = git.data !== undefined || git.isError;
  const fromGit = readOnlyFromGit(gitView);
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
        {mayAdopt && git.data === null && (
          <button type="button" onClick={() => setAdopting(true)} disabled={Boolean(data.busy)}>
            Deploy from git…
          </button>
        )}
      </div>
      {backingUp && <BackupDialog stackId={data.id} onClose={() => setBackingUp(false)} />}
      {adopting && <AdoptDialog stackId={data.id} onClose={() => setAdopting(false)} />}
      {gitView && <GitStackCard view={gitView} />}
      {/* From 1024 px the console (deploy output, logs) and the files (the compose editor)
          side by side, in view together; the other cards below (styles.css). */}
      <div className="stack-panes">
        <StackConsole
          stackId={data.id}
          busy={data.busy}
          logs={
            mayReadLogs
              ? data.services.map((s) => ({ service: s.name, containers: s.containers.map((c) => c.name) }))
              : null
          }
        />
        <section className="card stack-files" aria-labelledby="files-title">
          <h2 id="files-title">Files</h2>
          {fromGit && <GitFilesBanner view={gitView} />}
          {!gitKnown ? (
            <Loading />
          ) : mayEditFiles && !fromGit ? (
            <StackFileEditor stackId={data.id} kind="compose" label={data.compose_file} content={data.compose} />
          ) : (
            <ReadOnlyStackFile
              label={data.compose_file}
              content={data.compose}
              note={
                fromGit
                  ? "Read only: it comes from git."
                  : "Read only: compose files can mount any host path, so only admins edit them."
              }
            />
          )}
          <h3>Environment</h3>
          {mayEditFiles && data.env !== null ? (
            // The host's own, also for a stack from git (its repository's .env is a template);
            // shown with the compose file's editor, once the stack's source is known.
            !gitKnown ? (
              <Loading />
            ) : (
              <StackFileEditor stackId={data.id} kind="env" label=".env" content={data.env} />
            )
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
      <ServicesCard stack={data} withShell={has("shell")} />
      {has("usage") && (
        <UsageCard
          stackId={data.id}
          containers={data.services.flatMap((s) =>
            s.containers.map((c) => ({ name: c.name, running: c.state === "running" })),
          )}
        />
      )}
      {has("updates") && <StackUpdatesCard stackId={data.id} update={update} lastCheck={updates.data?.last_check} />}
      {mayDelete && <DeleteStackCard stackId={data.id} />}
    </main>
  );
}
