import { useQuery } from "@tanstack/react-query";
import { useState } from "react";
import { Link } from "react-router";
import type { Stack, StackUpdate } from "../../api/types";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useCan } from "../auth/permissions";
import { DeployConsole } from "./DeployConsole";
import { NewStackForm } from "./NewStackForm";
import { stacksQueryOptions, stackUpdatesQueryOptions } from "./queries";
import { BusyIndicator, CheckUpdates, StackActions, StateBadge, UpdatePill } from "./StackBits";

function runningCount(stack: Stack): number {
  return stack.services.filter((s) => s.running).length;
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
  return (
    <tr>
      <td>
        <div className="stack-name">
          <Link to={`/stacks/${encodeURIComponent(stack.id)}`}>{stack.id}</Link>
          {update?.has_update && <UpdatePill />}
        </div>
        {stack.busy && <BusyIndicator action={stack.busy} />}
      </td>
      <td>
        <StateBadge state={stack.state} error={stack.error} />
        {stack.state === "invalid" && stack.error && <p className="error small stack-error">{stack.error}</p>}
      </td>
      <td className="nowrap">
        {services === 0 ? (
          <span className="muted">No services</span>
        ) : (
          <>
            {runningCount(stack)} of {services} running
          </>
        )}
      </td>
      {withActions && (
        <RowActions>
          <StackActions stack={stack} hasUpdate={update?.has_update} onStarted={() => onStarted(stack.id)} />
        </RowActions>
      )}
    </tr>
  );
}

export function StacksPage() {
  const mayCreate = useCan("stacks.create");
  const mayRun = useCan("stacks.run");
  const stacks = useQuery(stacksQueryOptions());
  const updates = useQuery(stackUpdatesQueryOptions());
  const [creating, setCreating] = useState(false);
  // Consoles of the actions started on this page, newest first.
  const [watching, setWatching] = useState<string[]>([]);

  const updateOf = new Map((updates.data?.stacks ?? []).map((u) => [u.stack, u]));
  const busyOf = new Map((stacks.data ?? []).map((s) => [s.id, s.busy]));

  return (
    <main className="page">
      <div className="page-head">
        <h1>Stacks</h1>
        <div className="page-tools">
          <CheckUpdates lastCheck={updates.data?.last_check} />
          {mayCreate && !creating && (
            <button type="button" className="primary" onClick={() => setCreating(true)}>
              New stack
            </button>
          )}
        </div>
      </div>
      {updates.isError && <ErrorBanner error={updates.error} onRetry={() => void updates.refetch()} />}
      {mayCreate && creating && <NewStackForm onCancel={() => setCreating(false)} />}
      {watching.map((id) => (
        <DeployConsole
          key={id}
          stackId={id}
          busy={busyOf.get(id)}
          title={
            <>
              Deploy: <Link to={`/stacks/${encodeURIComponent(id)}`}>{id}</Link>
            </>
          }
          onClose={() => setWatching((ids) => ids.filter((other) => other !== id))}
        />
      ))}
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
          <Table label="Stacks" columns={["Name", "State", "Services"]} actions={mayRun}>
            {stacks.data.map((stack) => (
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
      </section>
    </main>
  );
}
