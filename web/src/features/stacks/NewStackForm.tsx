import { useState, type FormEvent } from "react";
import { useNavigate } from "react-router";
import { errorMessage } from "../../api/errors";
import { Field } from "../../components/Field";
import { useCreateStack } from "./queries";
import { useHost, withHost } from "../hosts/host";
import { FormActions } from "../../components/FormActions";
import { DockerRunConverter } from "./DockerRunConverter";

const COMPOSE_PLACEHOLDER = `services:
  web:
    image: nginx:1.27
    ports:
      - "8080:80"
`;

/**
 * Admin: a new stack folder from a name, a compose file (typed, or converted from a
 * `docker run` command) and an optional .env.
 */
export function NewStackForm({ onCancel }: { onCancel: () => void }) {
  const create = useCreateStack();
  const navigate = useNavigate();
  const host = useHost();
  const [name, setName] = useState("");
  const [compose, setCompose] = useState("");
  const [env, setEnv] = useState("");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    create.mutate(
      { name: name.trim(), compose, env },
      { onSuccess: (stack) => void navigate(withHost(`/stacks/${encodeURIComponent(stack.id)}`, host)) },
    );
  }

  return (
    <section className="card" aria-labelledby="new-stack-title">
      <h2 id="new-stack-title">New stack</h2>
      <form className="form wide" onSubmit={onSubmit} aria-label="New stack">
        <Field label="Name">
          <input required maxLength={200} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <DockerRunConverter
          compose={compose}
          onConverted={(converted) => {
            setCompose(converted.compose);
            if (!name.trim()) setName(converted.service);
          }}
        />
        <Field label="Compose file">
          <textarea
            className="code-editor"
            required
            rows={14}
            spellCheck={false}
            placeholder={COMPOSE_PLACEHOLDER}
            value={compose}
            onChange={(e) => setCompose(e.target.value)}
          />
        </Field>
        <Field label=".env (optional)">
          <textarea
            className="code-editor"
            rows={4}
            spellCheck={false}
            placeholder="KEY=value"
            value={env}
            onChange={(e) => setEnv(e.target.value)}
          />
        </Field>
        {create.isError && (
          <pre className="error error-detail" role="alert">
            {errorMessage(create.error)}
          </pre>
        )}
        <FormActions label="Create stack" busyLabel="Creating…" busy={create.isPending} onCancel={onCancel} />
      </form>
    </section>
  );
}
