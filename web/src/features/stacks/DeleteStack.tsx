import { useQuery } from "@tanstack/react-query";
import { useRef, useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import type { DeletePlan } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatBytes } from "../../components/format";
import { Loading } from "../../components/Loading";
import { stackDeletePlanQueryOptions, useDeleteStack } from "./queries";
import { useHost, withHost } from "../hosts/host";
import { FormActions } from "../../components/FormActions";

/** What the stacks page says after a deletion (router state of the navigation to /stacks). */
export interface DeletedState {
  deleted?: { stack: string; trash: string };
}

function names(items: string[]): string {
  return items.join(", ");
}

function PlanText({ plan, removeVolumes }: { plan: DeletePlan; removeVolumes: boolean }) {
  const folder = plan.folder;
  const files = `${folder.complete ? "" : "at least "}${folder.files} file${folder.files === 1 ? "" : "s"}, ${formatBytes(folder.bytes)}`;
  const existing = plan.volumes.filter((v) => v.exists).map((v) => v.name);
  return (
    <ul className="delete-plan">
      {plan.error && (
        <li className="error">
          The compose file does not resolve: <code>{plan.error}</code>
        </li>
      )}
      <li>
        {plan.containers.length ? (
          <>
            <code>docker compose down</code> stops and removes {plan.containers.length} container
            {plan.containers.length === 1 ? "" : "s"}: {names(plan.containers.map((c) => c.name))}.
          </>
        ) : (
          "No containers to remove."
        )}
      </li>
      {plan.networks.length > 0 && <li>Networks removed: {names(plan.networks)}.</li>}
      {plan.volumes.length > 0 && (
        <li data-testid="delete-plan-volumes">
          {removeVolumes ? (
            <strong>
              Named volumes removed, with their data: {names(existing.length ? existing : plan.volumes.map((v) => v.name))}.
            </strong>
          ) : (
            <>Named volumes kept: {names(plan.volumes.map((v) => v.name))}.</>
          )}
        </li>
      )}
      <li data-testid="delete-plan-folder">
        The folder <code>{folder.path}</code> ({files}) is moved to <code>{folder.trash}</code> in the stacks folder, not
        erased.
        {folder.binds.length > 0 && (
          <>
            {" "}
            Your data in {names(folder.binds.map((b) => `./${b.path === "." ? "" : b.path}`))} goes with the folder to{" "}
            <code>{folder.trash}</code>.
          </>
        )}
      </li>
      {plan.external_binds.length > 0 && (
        <li>Left alone (outside the stack folder): {names(plan.external_binds.map((b) => b.path))}.</li>
      )}
    </ul>
  );
}

/** Admin: deletion with its plan, confirmed by typing the stack's name. */
function DeleteStackDialog({ stackId, onClose }: { stackId: string; onClose: () => void }) {
  const host = useHost();
  const plan = useQuery(stackDeletePlanQueryOptions(host, stackId));
  const navigate = useNavigate();
  // Away to the Stacks page, with what was done, before the stack's queries are dropped.
  const remove = useDeleteStack({
    onDeleted: (result) => {
      const state: DeletedState = { deleted: { stack: result.stack, trash: result.trash } };
      void navigate(withHost("/stacks", host), { replace: true, state });
    },
  });
  const [removeVolumes, setRemoveVolumes] = useState(false);
  const [typed, setTyped] = useState("");
  const nameRef = useRef<HTMLInputElement>(null);
  const matches = typed === stackId;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!matches || !plan.data || remove.isPending) return;
    remove.mutate({ id: stackId, confirm: typed, removeVolumes });
  }

  return (
    <Dialog title={`Delete stack ${stackId}?`} onClose={onClose} initialFocus={nameRef} className="dialog-wide">
      <form onSubmit={onSubmit} aria-label={`Delete stack ${stackId}`}>
        <div className="dialog-body">
          {plan.isError ? <ErrorText error={plan.error} /> : !plan.data ? <Loading /> : (
            <PlanText plan={plan.data} removeVolumes={removeVolumes} />
          )}
          {plan.data && plan.data.volumes.length > 0 && (
            <label className="check">
              <input type="checkbox" checked={removeVolumes} onChange={(e) => setRemoveVolumes(e.target.checked)} />
              <span>Also remove named volumes (their data is lost)</span>
            </label>
          )}
          <Field label={`Type the stack's name, ${stackId}, to confirm`}>
            <input
              ref={nameRef}
              value={typed}
              autoComplete="off"
              spellCheck={false}
              onChange={(e) => setTyped(e.target.value)}
            />
          </Field>
        </div>
        {remove.isError && <ErrorText error={remove.error} />}
        <FormActions
          label="Delete stack"
          busyLabel="Deleting…"
          busy={remove.isPending}
          disabled={!matches || !plan.data}
          danger
          inDialog
          onCancel={onClose}
        />
      </form>
    </Dialog>
  );
}

export function DeleteStackCard({ stackId }: { stackId: string }) {
  const [open, setOpen] = useState(false);
  return (
    <section className="card danger-zone" aria-labelledby="delete-title">
      <h2 id="delete-title">Delete stack</h2>
      <p className="muted">
        Runs <code>docker compose down</code> (named volumes are kept unless you ask), then moves the stack&apos;s folder,
        with everything in it, to <code>.trash</code> in the stacks folder. You see exactly what goes before anything is
        removed.
      </p>
      <div className="actions">
        <button type="button" className="danger" aria-label={`Delete stack ${stackId}`} onClick={() => setOpen(true)}>
          Delete…
        </button>
      </div>
      {open && <DeleteStackDialog stackId={stackId} onClose={() => setOpen(false)} />}
    </section>
  );
}
