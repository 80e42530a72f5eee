import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { errorMessage } from "../../api/errors";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorBanner } from "../../components/ErrorBanner";
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
        <p className="muted" role="status">
          Loading…
        </p>
      ) : registries.data.length === 0 ? (
        <p className="muted">No registry credentials.</p>
      ) : (
        <div className="table-wrap">
          <table aria-label="Registry credentials">
            <thead>
              <tr>
                <th scope="col">Registry</th>
                <th scope="col">Username</th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {registries.data.map((entry) => (
                <tr key={entry.registry}>
                  <td>
                    <code>{entry.registry}</code>
                  </td>
                  <td>{entry.username}</td>
                  <td className="row-actions">
                    <ConfirmButton
                      label={`Delete credentials for ${entry.registry}`}
                      onConfirm={() => remove.mutate(entry.registry)}
                    >
                      Delete
                    </ConfirmButton>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {remove.isError && (
        <p className="error" role="alert">
          {errorMessage(remove.error)}
        </p>
      )}
      <h3>Add credentials</h3>
      <form className="form inline" onSubmit={onSubmit} aria-label="Add registry credentials">
        <label className="field">
          <span>Registry</span>
          <input
            required
            maxLength={255}
            placeholder="ghcr.io"
            autoComplete="off"
            value={registry}
            onChange={(e) => setRegistry(e.target.value)}
          />
        </label>
        <label className="field">
          <span>Registry username</span>
          <input
            required
            maxLength={255}
            autoComplete="off"
            value={username}
            onChange={(e) => setUsername(e.target.value)}
          />
        </label>
        <label className="field">
          <span>Registry password or token</span>
          <input
            type="password"
            required
            maxLength={4096}
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </label>
        <button type="submit" className="primary" disabled={save.isPending}>
          Save credentials
        </button>
      </form>
      {save.isError && (
        <p className="error" role="alert">
          {errorMessage(save.error)}
        </p>
      )}
      {savedName && !save.isError && (
        <p className="success" role="status">
          Credentials for {savedName} saved.
        </p>
      )}
    </section>
  );
}
