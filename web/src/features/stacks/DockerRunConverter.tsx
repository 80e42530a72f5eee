import { useState } from "react";
import { errorMessage } from "../../api/errors";
import type { ConvertedCompose } from "../../api/types";
import { ConfirmDialog } from "../../components/Dialog";
import { Field } from "../../components/Field";
import { useConvertDockerRun } from "./queries";

/**
 * "From a docker run command": a pasted command becomes the compose file (the server
 * converts it). Replacing a compose file the user already wrote is asked first; what the
 * conversion dropped (`--rm`, `-d`) is listed, and each option that gives the container the
 * host (`--privileged`, `--pid host`, `/` mounted, ...) is named in a warning.
 */
export function DockerRunConverter({
  compose,
  onConverted,
}: {
  compose: string;
  onConverted: (converted: ConvertedCompose) => void;
}) {
  const convert = useConvertDockerRun();
  const [command, setCommand] = useState("");
  const [replacing, setReplacing] = useState<ConvertedCompose | null>(null);

  function take(converted: ConvertedCompose) {
    setReplacing(null);
    onConverted(converted);
  }

  return (
    <details className="docker-run">
      <summary>From a docker run command</summary>
      <Field label="docker run command">
        <textarea
          className="code-editor"
          rows={4}
          spellCheck={false}
          placeholder="docker run -d --name web -p 8080:80 nginx:1.27"
          value={command}
          onChange={(e) => setCommand(e.target.value)}
        />
      </Field>
      <button
        type="button"
        disabled={!command.trim() || convert.isPending}
        onClick={() =>
          convert.mutate(command, {
            onSuccess: (converted) =>
              compose.trim() && compose !== converted.compose ? setReplacing(converted) : take(converted),
          })
        }
      >
        {convert.isPending ? "Converting…" : "Convert to compose"}
      </button>
      {convert.isError && (
        <p className="error" role="alert">
          {errorMessage(convert.error)}
        </p>
      )}
      {convert.isSuccess && convert.data.warnings.length > 0 && (
        <div className="host-warning tone-warn" role="alert">
          <p>
            <strong>This gives the container the host</strong> (root on it, as a rule):
          </p>
          <ul aria-label="Gives the container the host">
            {convert.data.warnings.map((warning) => (
              <li key={warning}>{warning}</li>
            ))}
          </ul>
        </div>
      )}
      {convert.isSuccess && convert.data.notes.length > 0 && (
        <ul className="muted small" aria-label="Left out">
          {convert.data.notes.map((note) => (
            <li key={note}>Left out {note}</li>
          ))}
        </ul>
      )}
      {replacing && (
        <ConfirmDialog
          title="Replace the compose file?"
          confirmLabel="Replace"
          onConfirm={() => take(replacing)}
          onCancel={() => setReplacing(null)}
        >
          The compose file typed below is replaced by the converted one.
        </ConfirmDialog>
      )}
    </details>
  );
}
