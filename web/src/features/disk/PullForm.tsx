import { useState, type FormEvent } from "react";
import { ErrorText } from "../../components/ErrorText";
import { useCan } from "../auth/permissions";
import { useHost } from "../hosts/host";
import { usePullImage } from "./queries";

/**
 * Pull an image by its reference (`repository:tag`): admins any, operators those of a
 * repository one of the host's stacks names (the server says so when it refuses).
 */
export function PullForm() {
  const host = useHost();
  const pull = usePullImage(host);
  const mayManage = useCan("disk.manage");
  const [reference, setReference] = useState("");
  const [pulled, setPulled] = useState<string | null>(null);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const wanted = reference.trim();
    if (!wanted || pull.isPending) return;
    setPulled(null);
    pull.mutate(wanted, {
      onSuccess: () => {
        setPulled(wanted);
        setReference("");
      },
    });
  }

  return (
    <form className="card pull-form" aria-label="Pull an image" onSubmit={onSubmit}>
      <label className="field inline">
        <span>Pull an image</span>
        <input
          value={reference}
          required
          maxLength={512}
          spellCheck={false}
          autoComplete="off"
          placeholder="repository:tag"
          onChange={(e) => setReference(e.target.value)}
        />
      </label>
      <button type="submit" disabled={pull.isPending || !reference.trim()}>
        {pull.isPending ? "Pulling…" : "Pull"}
      </button>
      {!mayManage && <span className="muted small">Of your stacks&apos; repositories.</span>}
      {pulled && (
        <p className="success small" role="status">
          Pulled {pulled}.
        </p>
      )}
      {pull.isError && <ErrorText error={pull.error} />}
    </form>
  );
}
