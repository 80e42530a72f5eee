import { useState, type FormEvent } from "react";
import type { PruneKind, PruneOptions, PrunePreview, PruneReport } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { formatBytes } from "../../components/format";
import { FormActions } from "../../components/FormActions";
import { Table } from "../../components/Table";
import { useHost } from "../hosts/host";
import { countOf, KIND_LABELS, KINDS } from "./filters";
import { DEFAULT_PRUNE_OPTIONS, PruneOptionsFields } from "./PruneOptionsFields";
import { usePrune, usePrunePreview } from "./queries";

/** Bytes per kind, with the count of objects of each: the kinds that have any, in the page's order. */
export function PerKind({
  label,
  bytes,
  counts,
  total,
}: {
  label: string;
  bytes: Record<string, number>;
  counts: Partial<Record<PruneKind, number>>;
  total: number;
}) {
  const kinds = KINDS.filter((kind) => (counts[kind] ?? 0) > 0 || (bytes[kind] ?? 0) > 0);
  return (
    <dl className="facts per-kind" aria-label={label}>
      {kinds.map((kind) => (
        <div key={kind} className="per-kind-row">
          <dt>{KIND_LABELS[kind]}</dt>
          <dd>
            {formatBytes(bytes[kind] ?? 0)}
            <span className="muted small"> · {countOf(kind, counts[kind] ?? 0)}</span>
          </dd>
        </div>
      ))}
      <div className="per-kind-row per-kind-total">
        <dt>Total</dt>
        <dd>
          <strong>{formatBytes(total)}</strong>
        </dd>
      </div>
    </dl>
  );
}

function countByKind(items: readonly { kind: PruneKind }[]): Partial<Record<PruneKind, number>> {
  const counts: Partial<Record<PruneKind, number>> = {};
  for (const item of items) counts[item.kind] = (counts[item.kind] ?? 0) + 1;
  return counts;
}

/** Objects named with their kind and why each stays (kept by a prune, or left by it). */
export function WhyList({ label, items }: { label: string; items: PruneReport["left"] }) {
  return (
    <ul className="plain why-list" aria-label={label}>
      {items.map((item) => (
        <li key={`${item.kind}:${item.id}`}>
          <span className="badge">{KIND_LABELS[item.kind]}</span> <code className="disk-name">{item.name}</code>
          <span className="muted small">: {item.reason}</span>
        </li>
      ))}
    </ul>
  );
}

function PreviewView({ preview }: { preview: PrunePreview }) {
  return (
    <>
      {preview.items.length === 0 ? (
        <p className="success" role="status">
          Nothing to remove: these options take nothing on this host now.
        </p>
      ) : (
        <>
          <p>
            {preview.items.length === 1 ? "This object goes" : `These ${preview.items.length} objects go`}, and nothing
            else: the prune removes exactly {preview.items.length === 1 ? "it" : "them"}, by id, and only while nothing has
            come to use {preview.items.length === 1 ? "it" : "them"} since.
          </p>
          <div className="prune-items">
            <Table label="To remove" columns={["Kind", "Object", "Frees"]}>
              {preview.items.map((item) => (
                <tr key={`${item.kind}:${item.id}`}>
                  <td>{KIND_LABELS[item.kind]}</td>
                  <td>
                    <code className="disk-name">{item.name}</code>
                  </td>
                  <td className="nowrap">{formatBytes(item.bytes)}</td>
                </tr>
              ))}
            </Table>
          </div>
        </>
      )}
      <PerKind label="Freed per kind" bytes={preview.bytes} counts={countByKind(preview.items)} total={preview.total} />
      {preview.kept.length > 0 && (
        <>
          <h3>Kept ({preview.kept.length})</h3>
          <p className="muted small">What these options name that a prune never takes, and why.</p>
          <div className="prune-items">
            <WhyList label="Kept" items={preview.kept} />
          </div>
        </>
      )}
    </>
  );
}

/** What a prune did: freed per kind (as the engine counted it), and what it left, with why. */
export function PruneOutcome({ report }: { report: PruneReport }) {
  return (
    <>
      <p className="success" role="status">
        Removed {report.removed.length} object{report.removed.length === 1 ? "" : "s"}: {formatBytes(report.total)}{" "}
        freed.
      </p>
      <PerKind label="Freed per kind" bytes={report.freed} counts={countByKind(report.removed)} total={report.total} />
      {report.left.length > 0 && (
        <>
          <h3>Left ({report.left.length})</h3>
          <p className="muted small">Objects of the preview the prune did not remove, and why.</p>
          <WhyList label="Left" items={report.left} />
        </>
      )}
    </>
  );
}

/**
 * Admin: a prune in three steps. The options (what may go; what never goes is said);
 * "Preview" lists every object that would go with the bytes each frees and the total per
 * kind, and what the options name that is kept and why; "Remove these N objects" sends
 * exactly the preview's objects (by id, not "whatever is unused now"); then the report.
 */
export function PruneDialog({ hostName, onClose }: { hostName: string; onClose: () => void }) {
  const host = useHost();
  const [options, setOptions] = useState<PruneOptions>(DEFAULT_PRUNE_OPTIONS);
  const preview = usePrunePreview(host);
  const prune = usePrune(host);
  const shown = preview.data;

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!shown) preview.mutate(options);
    else if (shown.items.length > 0 && !prune.isPending) prune.mutate(shown);
  }

  const title = `Prune ${hostName}`;
  if (prune.data) {
    return (
      <Dialog title={title} onClose={onClose} className="dialog-wide">
        <div className="dialog-body">
          <PruneOutcome report={prune.data} />
        </div>
        <div className="actions dialog-actions">
          <button type="button" className="primary" onClick={onClose}>
            Close
          </button>
        </div>
      </Dialog>
    );
  }
  return (
    <Dialog title={title} onClose={onClose} className="dialog-wide">
      <form onSubmit={onSubmit} aria-label={title}>
        <div className="dialog-body">
          {shown ? <PreviewView preview={shown} /> : <PruneOptionsFields name="prune" value={options} onChange={setOptions} />}
        </div>
        {preview.isError && <ErrorText error={preview.error} />}
        {prune.isError && <ErrorText error={prune.error} />}
        {shown ? (
          <FormActions
            label={shown.items.length === 1 ? "Remove this 1 object" : `Remove these ${shown.items.length} objects`}
            busyLabel="Removing…"
            busy={prune.isPending}
            disabled={shown.items.length === 0}
            danger
            inDialog
            onCancel={onClose}
          >
            <button
              type="button"
              disabled={prune.isPending}
              onClick={() => {
                prune.reset();
                preview.reset();
              }}
            >
              Change the options
            </button>
          </FormActions>
        ) : (
          <FormActions label="Preview" busyLabel="Reading the disk…" busy={preview.isPending} inDialog onCancel={onClose} />
        )}
      </form>
    </Dialog>
  );
}
