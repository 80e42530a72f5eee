import { useId, useState } from "react";
import { CopyButton } from "../../components/CopyButton";
import { Dialog } from "../../components/Dialog";
import { useUnsavedChanges } from "../../components/useUnsavedChanges";

const LEAVE = "The recovery key is not shown again. Leave without having written it down?";

/**
 * A new repository's recovery key, shown this once (the server keeps no copy it could show
 * again): large, to be written down, with its id in the repository and a copy button. The
 * dialog stays until the user says they have written it down: Close is disabled and Escape
 * does nothing until then, and leaving the page asks first.
 */
export function RecoveryKeyDialog({
  name,
  recoveryKey,
  keyId,
  onClose,
}: {
  name: string;
  recoveryKey: string;
  keyId: string | null;
  onClose: () => void;
}) {
  const warningId = useId();
  const captionId = useId();
  const [confirmed, setConfirmed] = useState(false);
  useUnsavedChanges(!confirmed, LEAVE);
  return (
    <Dialog
      title={`Recovery key of ${name}`}
      onClose={() => confirmed && onClose()}
      describedBy={warningId}
      className="form-dialog recovery-key"
    >
      <p className="success" role="status">
        Repository {name} made.
      </p>
      <p id={warningId}>
        <strong>
          Write this key down and keep it away from this server: with the repository's location it opens every backup
          from a fresh install. It is not shown again.
        </strong>
      </p>
      <figure aria-labelledby={captionId}>
        <figcaption id={captionId} className="muted small">
          Recovery key
        </figcaption>
        <p className="recovery-key-text">{recoveryKey}</p>
      </figure>
      {keyId && (
        <p className="muted small">
          Its key id in the repository: <code className="key-id">{keyId}</code>
        </p>
      )}
      <div className="actions">
        <CopyButton text={recoveryKey} label="Copy the recovery key" />
      </div>
      <label className="check">
        <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} />
        <span>I have written it down</span>
      </label>
      <div className="actions dialog-actions">
        <button type="button" className="primary" disabled={!confirmed} onClick={onClose}>
          Close
        </button>
      </div>
    </Dialog>
  );
}
