import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import { errorMessage } from "../../api/errors";
import { CodeEditor } from "../../components/editor/CodeEditor";
import { Field } from "../../components/Field";
import { useCreateStack } from "./queries";
import { useHost, withHost } from "../hosts/host";
import { FormActions } from "../../components/FormActions";
import { DockerRunConverter } from "./DockerRunConverter";
import { NewGitStackForm } from "../git/NewGitStackForm";

/** What "Start from an example" puts in the editor: real text to change, not a hint. */
const COMPOSE_EXAMPLE = `services:
  web:
    image: nginx:1.27
    ports:
      - "8080:80"
`;

type Source = "compose" | "git";

/**
 * Admin: a new stack, from a compose file written here or from a repository's folder
 * ("From git", `NewGitStackForm`).
 */
export function NewStackForm({ onCancel }: { onCancel: () => void }) {
  const [source, setSource] = useState<Source>("compose");
  return (
    <section className="card" aria-labelledby="new-stack-title">
      <h2 id="new-stack-title">New stack</h2>
      <fieldset className="new-stack-source">
        <legend>Source</legend>
        <label className="check">
          <input
            type="radio"
            name="new-stack-source"
            checked={source === "compose"}
            onChange={() => setSource("compose")}
          />
          <span>Compose file</span>
        </label>
        <label className="check">
          <input type="radio" name="new-stack-source" checked={source === "git"} onChange={() => setSource("git")} />
          <span>From git</span>
        </label>
      </fieldset>
      {source === "git" ? <NewGitStackForm onCancel={onCancel} /> : <ComposeStackForm onCancel={onCancel} />}
    </section>
  );
}

/**
 * A new stack folder from a name, a compose file (written in the same editor as a stack's
 * page has, pasted, started from an example, or converted from a `docker run` command) and
 * an optional .env.
 */
function ComposeStackForm({ onCancel }: { onCancel: () => void }) {
  const create = useCreateStack();
  const navigate = useNavigate();
  const host = useHost();
  const [name, setName] = useState("");
  const [compose, setCompose] = useState("");
  const [env, setEnv] = useState("");
  const [empty, setEmpty] = useState(false);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!compose.trim()) {
      setEmpty(true);
      return;
    }
    create.mutate(
      { name: name.trim(), compose, env },
      { onSuccess: (stack) => void navigate(withHost(`/stacks/${encodeURIComponent(stack.id)}`, host)) },
    );
  }

  return (
    <form className="form wide" onSubmit={onSubmit} aria-label="New stack">
      <Field label="Name">
        <input required maxLength={200} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <DockerRunConverter
        compose={compose}
        onConverted={(converted) => {
          setCompose(converted.compose);
          setEmpty(false);
          if (!name.trim()) setName(converted.service);
        }}
      />
      <div className="field">
        <span>Compose file</span>
        <CodeEditor
          value={compose}
          language="yaml"
          label="Compose file"
          onChange={(value) => {
            setCompose(value);
            setEmpty(false);
          }}
        />
        {!compose.trim() && (
          <p className={empty ? "error small" : "muted small"} role={empty ? "alert" : undefined}>
            {empty ? "Write the compose file first: " : "Write or paste the compose file, or "}
            <button
              type="button"
              className="link-button"
              onClick={() => {
                setCompose(COMPOSE_EXAMPLE);
                setEmpty(false);
              }}
            >
              start from an example
            </button>
            .
          </p>
        )}
      </div>
      <div className="field short-editor">
        <span>.env (optional)</span>
        <CodeEditor value={env} language="env" label=".env (optional)" onChange={setEnv} />
      </div>
      {create.isError && (
        <pre className="error error-detail" role="alert">
          {errorMessage(create.error)}
        </pre>
      )}
      <FormActions label="Create stack" busyLabel="Creating…" busy={create.isPending} onCancel={onCancel} />
    </form>
  );
}
