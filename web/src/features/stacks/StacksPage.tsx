import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link, useLocation, useSearchParams } from "react-router";
import type { Stack, StackUpdate } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { useHostInfo } from "../hosts/capabilities";
import { useHost, withHost } from "../hosts/host";
import { HostNote, HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import { CheckUpdates } from "./CheckUpdates";
import { DeployConsole } from "./DeployConsole";
import { NewStackForm } from "./NewStackForm";
import { stacksQueryOptions, stackUpdatesQueryOptions } from "./queries";
import type { DeletedState } from "./DeleteStack";
import { PortList } from "./PortList";
import { RegistryQuotas } from "./RegistryQuotas";
import { StackActions } from "./StackActions";
import { STATE_ORDER, servicesSummary } from "./state";
import { BusyIndicator, StateBadge } from "./StackStatus";
import { StackUpdatePill } from "./UpdatePill";

/** The published ports of a stack's containers (those with a host port). */
function publishedPorts(stack: Stack): string[] {
  return stack.services.flatMap((s) => s.containers.flatMap((c) => c.ports.filter((p) => p.includes("->"))));
}

export type StackSort = "name" | "state" | "update";
const SORTS: Record<StackSort, string> = { name: "Name", state: "State", update: "Update available" };

/** Whether the stack's name, one of its services or one of its images contains `query`. */
export function matchesStack(stack: Stack, query: string): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return true;
  const words = [
    stack.id,
    ...stack.services.flatMap((s) => [s.name, s.image ?? "", ...s.containers.map((c) => c.image)]),
  ];
  return words.some((w) => w.toLowerCase().includes(q));
}

export function sortStacks(stacks: Stack[], sort: StackSort, hasUpdate: (id: string) => boolean): Stack[] {
  const byName = (a: Stack, b: Stack) => a.id.localeCompare(b.id);
  const rank = (s: Stack) => (sort === "state" ? STATE_ORDER.indexOf(s.state) : sort === "update" ? (hasUpdate(s.id) ? 0 : 1) : 0);
  return [...stacks].sort((a, b) => rank(a) - rank(b) || byName(a, b));
}

/** A stack's page on the host shown. */
function useStackHref(): (id: string) => string {
  const host = useHost();
  return (id) => withHost(`/stacks/${encodeURIComponent(id)}`, host);
}

function StackRow({
  stack,
  update,
  withActions,
  onStarted,
}: {
  stack: Stack;
  update: StackUpdate | undefined;
  withActions: boolean;
  onStarted: (id: string) => void;
}) {
  const services = stack.services.length;
  const stackHref = useStackHref();
  return (
    <tr>
      <td>
        <div className="stack-name">
          <Link to={stackHref(stack.id)}>{stack.id}</Link>
          <StackUpdatePill update={update} />
        </div>
        {stack.busy && <BusyIndicator action={stack.busy} />}
      </td>
      <td>
        <StateBadge state={stack.state} error={stack.error} />
        {stack.state === "invalid" && stack.error && <p className="error small stack-error">{stack.error}</p>}
      </td>
      <td className="nowrap">
        {services === 0 ? <span className="muted">No services</span> : servicesSummary(stack)}
      </td>
      <td>
        <PortList ports={publishedPorts(stack)} />
      </td>
      {withActions && (
        <RowActions>
          <StackActions stack={stack} hasUpdate={update?.has_update} onStarted={() => onStarted(stack.id)} />
        </RowActions>
      )}
    </tr>
  );
}

/**
 * The Stacks page of the host chosen with the host switcher (`?host=`): made anew for each
 * host, so that consoles and forms opened on one are not carried to another.
 */
export function StacksPage() {
  const host = useHost();
  return <HostStacks key={String(host)} />;
}

function HostStacks() {
  const host = useHost();
  const info = useHostInfo(host);
  const unavailable = info.unavailable("stacks");
  const usable = info.ready && !unavailable;
  const withUpdates = usable && info.unavailable("updates") === null;
  const mayCreate = useCan("stacks.create") && usable;
  const mayRun = useCan("stacks.run");
  const stackHref = useStackHref();
  const stacks = useQuery({ ...stacksQueryOptions(host), enabled: usable });
  const updates = useQuery({ ...stackUpdatesQueryOptions(host), enabled: withUpdates });
  const [params, setParams] = useSearchParams();
  // `?new=1` (the empty dashboard's "New stack") opens the form at once.
  const [creating, setCreating] = useState(() => params.get("new") === "1");
  const query = params.get("q") ?? "";
  const sortParam = params.get("sort");
  const sort: StackSort = sortParam === "state" || sortParam === "update" ? sortParam : "name";
  const deleted = (useLocation().state as DeletedState | null)?.deleted;

  function setParam(key: string, value: string, fallback: string) {
    setParams(
      (current) => {
        const next = new URLSearchParams(current);
        if (value === fallback) next.delete(key);
        else next.set(key, value);
        return next;
      },
      { replace: true, state: null },
    );
  }
  // Consoles of the actions started on this page, newest first.
  const [watching, setWatching] = useState<string[]>([]);

  const updateOf = new Map((updates.data?.stacks ?? []).map((u) => [u.stack, u]));
  const busyOf = new Map((stacks.data ?? []).map((s) => [s.id, s.busy]));
  const shown = sortStacks(
    (stacks.data ?? []).filter((s) => matchesStack(s, query)),
    sort,
    (id) => Boolean(updateOf.get(id)?.has_update),
  );

  return (
    <main className="page">
      <div className="page-head">
        <h1>Stacks</h1>
        <div className="page-tools">
          <HostSwitcher page="/stacks" />
          {withUpdates && <CheckUpdates lastCheck={updates.data?.last_check} />}
          {mayCreate && !creating && (
            <button type="button" className="primary" onClick={() => setCreating(true)}>
              New stack
            </button>
          )}
        </div>
      </div>
      <HostNote info={info} />
      {withUpdates && <RegistryQuotas quotas={updates.data?.registries ?? []} />}
      {unavailable && <HostUnavailable reason={unavailable} />}
      {deleted && (
        <p className="success" role="status">
          Stack {deleted.stack} deleted. Its folder is in <code>{deleted.trash}</code> in the stacks folder.
        </p>
      )}
      {/* One banner for one cause: when the list failed too (an offline agent), it says why. */}
      {updates.isError && !stacks.isError && (
        <ErrorBanner error={updates.error} onRetry={() => void updates.refetch()} />
      )}
      {mayCreate && creating && (
        <NewStackForm
          onCancel={() => {
            setCreating(false);
            setParam("new", "", "");
          }}
        />
      )}
      {watching.map((id) => (
        <DeployConsole
          key={id}
          stackId={id}
          busy={busyOf.get(id)}
          title={
            <>
              Deploy: <Link to={stackHref(id)}>{id}</Link>
            </>
          }
          onClose={() => setWatching((ids) => ids.filter((other) => other !== id))}
        />
      ))}
      {!unavailable && (
        <section className="card" aria-labelledby="stacks-title">
          <h2 id="stacks-title" className="visually-hidden">
            All stacks
          </h2>
          {stacks.isError && !stacks.data ? (
            <ErrorBanner error={stacks.error} onRetry={() => void stacks.refetch()} />
          ) : !stacks.data ? (
            <Loading />
          ) : stacks.data.length === 0 ? (
            <p className="muted">
              No stacks yet. {mayCreate ? "Create one with “New stack”, or put" : "Put"} a folder with a compose file in
              the stacks folder.
            </p>
          ) : (
            <>
              <div className="list-tools" role="search">
                <label className="field inline">
                  <span>Search</span>
                  <input
                    type="search"
                    value={query}
                    placeholder="Name, service or image"
                    onChange={(e) => setParam("q", e.target.value, "")}
                  />
                </label>
                <label className="field inline">
                  <span>Sort by</span>
                  <select value={sort} onChange={(e) => setParam("sort", e.target.value, "name")}>
                    {Object.entries(SORTS).map(([value, label]) => (
                      <option key={value} value={value}>
                        {label}
                      </option>
                    ))}
                  </select>
                </label>
              </div>
              {shown.length === 0 ? (
                <p className="muted">No stack matches “{query.trim()}”.</p>
              ) : (
                <Table label="Stacks" columns={["Name", "State", "Services", "Ports"]} actions={mayRun}>
                  {shown.map((stack) => (
                    <StackRow
                      key={stack.id}
                      stack={stack}
                      update={updateOf.get(stack.id)}
                      withActions={mayRun}
                      onStarted={(id) => setWatching((ids) => [id, ...ids.filter((other) => other !== id)])}
                    />
                  ))}
                </Table>
              )}
            </>
          )}
        </section>
      )}
    </main>
  );
}
