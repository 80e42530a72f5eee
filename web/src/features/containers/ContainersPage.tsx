import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { errorMessage } from "../../api/errors";
import type { ContainerAction, OutsideContainer } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import type { Tone } from "../../components/tone";
import { useCan } from "../auth/permissions";
import { useHostInfo } from "../hosts/capabilities";
import { useHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import { PortList } from "../stacks/PortList";
import { LogPanel } from "./LogsCard";
import { outsideContainersQueryOptions, outsideLogUrl, useOutsideContainerAction } from "./queries";

const STATE_TONES: Record<string, Tone> = {
  running: "good",
  restarting: "warn",
  paused: "warn",
  dead: "bad",
};

/** An image as `docker ps` shows it: an id (a container whose tag moved on) cut to 12 digits. */
function shortImage(image: string): string {
  return image.startsWith("sha256:") ? image.slice(7, 19) : image;
}

/** What an admin may do with a container in `state`. */
function actionsFor(state: string): ContainerAction[] {
  return state === "running" || state === "restarting" ? ["stop", "restart"] : ["start"];
}

const ACTION_LABELS: Record<ContainerAction, string> = { start: "Start", stop: "Stop", restart: "Restart" };

function ContainerRow({
  container,
  mayAct,
  showingLogs,
  onLogs,
}: {
  container: OutsideContainer;
  mayAct: boolean;
  showingLogs: boolean;
  onLogs: () => void;
}) {
  const host = useHost();
  const act = useOutsideContainerAction(host);
  const busy = act.isPending && act.variables.name === container.name;
  return (
    <tr>
      <th scope="row">
        {/* (No "not in a stack" badge: the page lists only those, and says so above.) */}
        {container.name}
        {act.isError && (
          <p className="error small" role="alert">
            {errorMessage(act.error)}
          </p>
        )}
      </th>
      <td>
        <code title={container.image}>{shortImage(container.image)}</code>
      </td>
      <td>
        <span className={`state tone-${STATE_TONES[container.state] ?? "off"}`}>{container.state}</span>{" "}
        <span className="muted small">{container.status}</span>
      </td>
      <td>
        <PortList ports={container.ports} />
      </td>
      <td>{container.project ?? <span className="muted">—</span>}</td>
      {mayAct && (
        <RowActions>
          {actionsFor(container.state).map((action) => (
            <button
              key={action}
              type="button"
              disabled={busy}
              aria-label={`${ACTION_LABELS[action]} ${container.name}`}
              onClick={() => act.mutate({ name: container.name, action })}
            >
              {busy && act.variables.action === action ? `${ACTION_LABELS[action]}…` : ACTION_LABELS[action]}
            </button>
          ))}
          <button
            type="button"
            aria-pressed={showingLogs}
            aria-label={`Logs of ${container.name}`}
            onClick={onLogs}
          >
            Logs
          </button>
        </RowActions>
      )}
    </tr>
  );
}

/**
 * The containers of a host that no stack owns (made by `docker run`, another tool, or a
 * compose project whose folder is not a stack here), as Portainer users expect to see
 * every container; admins start, stop and restart them and follow their logs.
 */
export function ContainersPage() {
  const host = useHost();
  const info = useHostInfo(host);
  const mayAct = useCan("containers.manage");
  const unavailable = info.unavailable("containers");
  const listed = useQuery({ ...outsideContainersQueryOptions(host), enabled: info.ready && !unavailable });
  const [logsOf, setLogsOf] = useState<string | null>(null);

  return (
    <main className="page">
      <div className="page-head">
        <h1>Containers</h1>
        <div className="page-tools">
          <HostSwitcher page="/containers" />
        </div>
      </div>
      <HostNote info={info} />
      <p className="muted">
        Containers on this host that no stack owns: started with <code>docker run</code>, by another tool, or by a
        compose project whose folder is not a stack here. Stacks&apos; own containers are on their pages.
      </p>
      {unavailable ? (
        <HostUnavailable reason={unavailable} />
      ) : listed.isError ? (
        <ErrorBanner error={listed.error} onRetry={() => void listed.refetch()} />
      ) : !listed.data ? (
        <Loading />
      ) : listed.data.length === 0 ? (
        <p className="muted">Every container on this host belongs to a stack.</p>
      ) : (
        <Table
          label="Containers outside stacks"
          columns={["Name", "Image", "State", "Ports", "Compose project"]}
          actions={mayAct}
        >
          {listed.data.map((container) => (
            <ContainerRow
              key={container.name}
              container={container}
              mayAct={mayAct}
              showingLogs={logsOf === container.name}
              onLogs={() => setLogsOf((now) => (now === container.name ? null : container.name))}
            />
          ))}
        </Table>
      )}
      {mayAct && logsOf && (
        <LogPanel key={`${String(host)}:${logsOf}`} url={outsideLogUrl(host, logsOf)} title={`Logs of ${logsOf}`} />
      )}
    </main>
  );
}
