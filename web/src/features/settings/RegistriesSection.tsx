import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { Loading } from "../../components/Loading";
import { PasswordInput } from "../../components/PasswordInput";
import { RowActions, Table } from "../../components/Table";
import { registriesQueryOptions, useDeleteRegistry, useSetRegistry } from "./queries";

/** Admin only: credentials the update checks use for private registries. Passwords are write-only. */
export function RegistriesSection() {
  const registries = useQuery(registriesQueryOptions());
  const save = useSetRegistry();
  const remove = useDeleteRegistry();
  const [registry, setRegistry] = useState("");
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [savedName, setSavedName] = useState<string | null>(null);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setSavedName(null);
    save.mutate(
      { registry: registry.trim(), username: username.trim(), password },
      {
        onSuccess: (saved) => {
          setSavedName(saved.registry);
          setRegistry("");
          setUsername("");
          setPassword("");
        },
      },
    );
  }

  return (
    <section className="card" aria-labelledby="registries-title">
      <h2 id="registries-title">Registry credentials</h2>
      <p className="muted">Used to check private images for updates. Saving a registry again replaces its login.</p>
      {registries.isError ? (
        <ErrorBanner error={registries.error} onRetry={() => void registries.refetch()} />
      ) : !registries.data ? (
        <Loading />
      ) : registries.data.length === 0 ? (
        <p className="muted">No registry credentials.</p>
      ) : (
        <Table label="Registry credentials" columns={["Registry", "Username"]} actions>
          {registries.data.map((entry) => (
            <tr key={entry.registry}>
              <td>
                <code>{entry.registry}</code>
              </td>
              <td>{entry.username}</td>
              <RowActions>
                <ConfirmButton
                  label={`Delete credentials for ${entry.registry}`}
                  onConfirm={() => remove.mutate(entry.registry)}
                >
                  Delete
                </ConfirmButton>
              </RowActions>
            </tr>
          ))}
        </Table>
      )}
      {remove.isError && <ErrorText error={remove.error} />}
      <h3>Add credentials</h3>
      <form className="form inline" onSubmit={onSubmit} aria-label="Add registry credentials">
        <Field label="Registry">
          <input
            required
            maxLength={255}
            placeholder="ghcr.io"
            autoComplete="off"
            value={registry}
            onChange={(e) => setRegistry(e.target.value)}
          />
        </Field>
        <Field label="Registry username">
          <input
            required
            maxLength={255}
            autoComplete="off"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
          />
        </Field>
        <PasswordInput
          label="Registry password or token"
          maxLength={4096}
          autoComplete="new-password"
          value={password}
          onChange={setPassword}
        />
        <button type="submit" className="primary" disabled={save.isPending}>
          Save credentials
        </button>
      </form>
      {save.isError && <ErrorText error={save.error} />}
      {savedName && !save.isError && (
        <p className="success" role="status">
          Credentials for {savedName} saved.
        </p>
      )}
    </section>
  );
}
