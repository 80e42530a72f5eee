import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { Role } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { RowActions, Table } from "../../components/Table";
import { useCurrentUser } from "../auth/queries";
import { useCreateUser, useDeleteUser, useSetUserPassword, usersQueryOptions } from "./queries";

const ROLES: readonly Role[] = ["user", "admin"];

/** Inline form to set another user's password. */
function SetPasswordForm({ username, onDone }: { username: string; onDone: (message: string) => void }) {
  const setPassword = useSetUserPassword();
  const [password, setValue] = useState("");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPassword.mutate({ username, password }, { onSuccess: () => onDone(`Password of ${username} changed.`) });
  }

  return (
    <form className="form inline" onSubmit={onSubmit} aria-label={`Set password of ${username}`}>
      <input type="text" name="username" autoComplete="username" value={username} readOnly hidden />
      <Field label={`New password for ${username}`}>
        <input type="password" required autoComplete="new-password" value={password} onChange={(e) => setValue(e.target.value)} />
      </Field>
      <button type="submit" className="primary" disabled={setPassword.isPending}>
        Set password
      </button>
      <button type="button" onClick={() => onDone("")}>
        Cancel
      </button>
      {setPassword.isError && <ErrorText error={setPassword.error} />}
    </form>
  );
}

/** Admin only: the accounts that can sign in. */
export function UsersSection() {
  const me = useCurrentUser();
  const users = useQuery(usersQueryOptions());
  const create = useCreateUser();
  const remove = useDeleteUser();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("user");
  const [createdName, setCreatedName] = useState<string | null>(null);
  const [resetting, setResetting] = useState<string | null>(null);
  const [resetMessage, setResetMessage] = useState("");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const name = username.trim();
    create.mutate(
      { username: name, password, role },
      {
        onSuccess: () => {
          setCreatedName(name);
          setUsername("");
          setPassword("");
          setRole("user");
        },
      },
    );
  }

  return (
    <section className="card" aria-labelledby="users-title">
      <h2 id="users-title">Users</h2>
      {users.isError ? (
        <ErrorBanner error={users.error} onRetry={() => void users.refetch()} />
      ) : !users.data ? (
        <Loading />
      ) : (
        <Table label="Users" columns={["Username", "Role", "Created"]} actions>
          {users.data.map((user) => (
            <tr key={user.id}>
              <td>{user.username}</td>
              <td>{user.role}</td>
              <td>{formatDateTime(user.created_at)}</td>
              <RowActions>
                {user.username === me?.username ? (
                  <span className="muted">you</span>
                ) : (
                  <>
                    <button
                      type="button"
                      aria-label={`Set password of ${user.username}`}
                      onClick={() => {
                        setResetMessage("");
                        setResetting(user.username);
                      }}
                    >
                      Set password
                    </button>{" "}
                    <ConfirmButton label={`Delete user ${user.username}`} onConfirm={() => remove.mutate(user.username)}>
                      Delete
                    </ConfirmButton>
                  </>
                )}
              </RowActions>
            </tr>
          ))}
        </Table>
      )}
      {resetting && (
        <SetPasswordForm
          key={resetting}
          username={resetting}
          onDone={(message) => {
            setResetting(null);
            setResetMessage(message);
          }}
        />
      )}
      {resetMessage && (
        <p className="success" role="status">
          {resetMessage}
        </p>
      )}
      {remove.isError && <ErrorText error={remove.error} />}
      <h3>Add a user</h3>
      <form className="form inline" onSubmit={onSubmit} aria-label="Create user">
        <Field label="Username">
          <input required autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} />
        </Field>
        <Field label="Password">
          <input
            type="password"
            required
            autoComplete="new-password"
            value={password}
            onChange={(e) => setPassword(e.target.value)}
          />
        </Field>
        <Field label="Role">
          <select value={role} onChange={(e) => setRole(e.target.value as Role)}>
            {ROLES.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </Field>
        <button type="submit" className="primary" disabled={create.isPending}>
          Create user
        </button>
      </form>
      {create.isError && <ErrorText error={create.error} />}
      {create.isSuccess && createdName && (
        <p className="success" role="status">
          User {createdName} created.
        </p>
      )}
    </section>
  );
}
