import { useQuery } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import type { Role, UserRow } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { PasswordInput } from "../../components/PasswordInput";
import { RowActions, Table } from "../../components/Table";
import { ROLE_DESCRIPTIONS, ROLES } from "../auth/permissions";
import { useCurrentUser } from "../auth/queries";
import {
  useCreateUser,
  useDeleteUser,
  useRevokeUserToken,
  useSetUserPassword,
  useResetTwoFactor,
  useUpdateUser,
  usersQueryOptions,
  userTokensQueryOptions,
} from "./queries";

/** A role select with the chosen role's one-line description under it. */
function RoleField({ label, value, onChange }: { label: string; value: Role; onChange: (role: Role) => void }) {
  const hintId = useId();
  return (
    <div className="role-field">
      <Field label={label}>
        <select value={value} aria-describedby={hintId} onChange={(e) => onChange(e.target.value as Role)}>
          {ROLES.map((r) => (
            <option key={r} value={r} title={ROLE_DESCRIPTIONS[r]}>
              {r}
            </option>
          ))}
        </select>
      </Field>
      <p className="muted small role-hint" id={hintId}>
        {ROLE_DESCRIPTIONS[value]}
      </p>
    </div>
  );
}

/** Inline form to set another user's password. */
function SetPasswordForm({ username, onDone }: { username: string; onDone: (message: string) => void }) {
  const setPassword = useSetUserPassword();
  const [password, setValue] = useState("");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    setPassword.mutate(
      { username, password },
      {
        onSuccess: () =>
          onDone(`Password of ${username} changed; their sessions ended and their API tokens were revoked.`),
      },
    );
  }

  return (
    <form className="form inline" onSubmit={onSubmit} aria-label={`Set password of ${username}`}>
      <input type="text" name="username" autoComplete="username" value={username} readOnly hidden />
      <PasswordInput label={`New password for ${username}`} autoComplete="new-password" value={password} onChange={setValue} />
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

/** Inline form to give another user a new role. */
function RoleForm({ user, onDone }: { user: UserRow; onDone: (message: string) => void }) {
  const update = useUpdateUser();
  const [role, setRole] = useState<Role>(user.role);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    update.mutate(
      { username: user.username, change: { role } },
      { onSuccess: (changed) => onDone(`${changed.username} is now ${changed.role}; their sessions ended.`) },
    );
  }

  return (
    <form className="form inline" onSubmit={onSubmit} aria-label={`Change role of ${user.username}`}>
      <RoleField label={`New role for ${user.username}`} value={role} onChange={setRole} />
      <button type="submit" className="primary" disabled={update.isPending || role === user.role}>
        Save role
      </button>
      <button type="button" onClick={() => onDone("")}>
        Cancel
      </button>
      <p className="muted small">
        A new role ends {user.username}&apos;s sessions and revokes their API tokens.
      </p>
      {update.isError && <ErrorText error={update.error} />}
    </form>
  );
}

/** Another user's API tokens, each revocable (after confirmation). */
function UserTokens({ username, onClose }: { username: string; onClose: () => void }) {
  const tokens = useQuery(userTokensQueryOptions(username));
  const revoke = useRevokeUserToken();
  const label = `API tokens of ${username}`;

  return (
    <section className="user-tokens" aria-label={label}>
      <div className="console-head">
        <h3>{label}</h3>
        <button type="button" className="link-button" aria-label={`Close API tokens of ${username}`} onClick={onClose}>
          Close
        </button>
      </div>
      {tokens.isError ? (
        <ErrorBanner error={tokens.error} onRetry={() => void tokens.refetch()} />
      ) : !tokens.data ? (
        <Loading />
      ) : tokens.data.length === 0 ? (
        <p className="muted">{username} has no API tokens.</p>
      ) : (
        <Table label={label} columns={["Name", "Created", "Last used"]} actions>
          {tokens.data.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>{formatDateTime(token.created_at)}</td>
              <td>{token.last_used_at ? formatDateTime(token.last_used_at) : "Never"}</td>
              <RowActions>
                <ConfirmButton
                  label={`Revoke token ${token.name} of ${username}`}
                  disabled={revoke.isPending}
                  onConfirm={() => revoke.mutate({ username, tokenId: token.id })}
                >
                  Revoke
                </ConfirmButton>
              </RowActions>
            </tr>
          ))}
        </Table>
      )}
      {revoke.isError && <ErrorText error={revoke.error} />}
    </section>
  );
}

/** Admin: how a user signs in: their email (what a provider's verified email links by), two-factor. */
function SignInForm({ user, onDone }: { user: UserRow; onDone: (message: string) => void }) {
  const update = useUpdateUser();
  const reset = useResetTwoFactor();
  const [email, setEmail] = useState(user.email ?? "");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    update.mutate(
      { username: user.username, change: { email: email.trim() } },
      { onSuccess: () => onDone(`Email of ${user.username} saved.`) },
    );
  }

  function require(required: boolean) {
    update.mutate(
      { username: user.username, change: { two_factor_required: required } },
      {
        onSuccess: () =>
          onDone(
            required
              ? `${user.username} must set up two-factor sign-in at their next sign-in.`
              : `Two-factor sign-in is optional for ${user.username}.`,
          ),
      },
    );
  }

  return (
    <div className="form" role="region" aria-label={`Sign-in of ${user.username}`}>
      <form className="form inline" onSubmit={onSubmit} aria-label={`Email of ${user.username}`}>
        <Field label="Email">
          <input type="email" autoComplete="off" value={email} onChange={(e) => setEmail(e.target.value)} />
        </Field>
        <button type="submit" disabled={update.isPending}>
          Save email
        </button>
      </form>
      <p className="muted small">
        An identity provider&apos;s verified email signs in as this account when linking is on.
      </p>
      {/* Only a local account (one with a password) can have turned two-factor on: this one
          was linked to a provider account since, and the provider's sign-in skips it. */}
      {user.provider_account && user.two_factor && (
        <p className="muted small">
          Linked to the identity provider: its two-factor is asked only at password sign-in, not at a sign-in through
          the provider (that relies on the provider&apos;s own checks).
        </p>
      )}
      {!user.provider_account && (
        <div className="actions">
          <label className="check">
            <input
              type="checkbox"
              checked={user.two_factor_required}
              disabled={update.isPending}
              onChange={(e) => require(e.target.checked)}
            />{" "}
            Require two-factor
          </label>
          {user.two_factor && (
            <ConfirmButton
              label={`Reset two-factor of ${user.username}`}
              warning={`Turns off ${user.username}'s two-factor sign-in and ends their sessions and API tokens.`}
              disabled={reset.isPending}
              onConfirm={() =>
                reset.mutate(user.username, {
                  onSuccess: () => onDone(`Two-factor sign-in of ${user.username} is off; their sessions ended.`),
                })
              }
            >
              Reset two-factor
            </ConfirmButton>
          )}
        </div>
      )}
      {update.isError && <ErrorText error={update.error} />}
      {reset.isError && <ErrorText error={reset.error} />}
    </div>
  );
}

function SignInBadges({ user }: { user: UserRow }) {
  return (
    <>
      {user.provider_account && (
        <span className="badge" title="Signs in through the identity provider">
          SSO
        </span>
      )}
      {user.two_factor && (
        <span
          className="badge"
          title={
            user.provider_account
              ? "Two-factor sign-in is on for its password; a sign-in through the identity provider does not ask it"
              : "Two-factor sign-in is on"
          }
        >
          2FA
        </span>
      )}
      {user.two_factor_required && (
        <span
          className={user.two_factor ? "badge" : "badge tone-warn"}
          title={user.two_factor ? "May not turn two-factor sign-in off" : "Must set up two-factor sign-in"}
        >
          2FA required
        </span>
      )}
    </>
  );
}

type Panel = { kind: "password" | "role" | "tokens" | "sign-in"; username: string };

/** Admin only: the accounts that can sign in. */
export function UsersSection() {
  const me = useCurrentUser();
  const users = useQuery(usersQueryOptions());
  const create = useCreateUser();
  const remove = useDeleteUser();
  const update = useUpdateUser();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [role, setRole] = useState<Role>("viewer");
  const [createdName, setCreatedName] = useState<string | null>(null);
  const [panel, setPanel] = useState<Panel | null>(null);
  const [message, setMessage] = useState("");

  const panelUser = panel ? users.data?.find((u) => u.username === panel.username) : undefined;

  function open(kind: Panel["kind"], name: string) {
    setMessage("");
    update.reset();
    setPanel(panel?.kind === kind && panel.username === name ? null : { kind, username: name });
  }

  function closePanel(done: string) {
    setPanel(null);
    setMessage(done);
  }

  function setDisabled(user: UserRow, disabled: boolean) {
    setMessage("");
    update.mutate(
      { username: user.username, change: { disabled } },
      {
        onSuccess: (changed) =>
          setMessage(
            changed.disabled
              ? `${changed.username} is disabled; their sessions ended and their API tokens were revoked.`
              : `${changed.username} can sign in again.`,
          ),
      },
    );
  }

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
          setRole("viewer");
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
        <Table label="Users" columns={["Username", "Role", "Status", "Created"]} actions>
          {users.data.map((user) => (
            <tr key={user.id}>
              <td>
                {user.username} <SignInBadges user={user} />
                {user.email && <div className="muted small">{user.email}</div>}
              </td>
              <td>{user.role}</td>
              <td>
                {user.disabled ? (
                  <span className="status tone-bad">Disabled</span>
                ) : (
                  <span className="muted">Active</span>
                )}
              </td>
              <td>{formatDateTime(user.created_at)}</td>
              <RowActions>
                {user.username === me?.username ? (
                  <span className="muted">you</span>
                ) : (
                  <>
                    <button
                      type="button"
                      aria-label={`Change role of ${user.username}`}
                      aria-expanded={panel?.kind === "role" && panel.username === user.username}
                      onClick={() => open("role", user.username)}
                    >
                      Change role
                    </button>{" "}
                    {user.disabled ? (
                      <button
                        type="button"
                        aria-label={`Enable user ${user.username}`}
                        disabled={update.isPending}
                        onClick={() => setDisabled(user, false)}
                      >
                        Enable
                      </button>
                    ) : (
                      <ConfirmButton
                        label={`Disable user ${user.username}`}
                        disabled={update.isPending}
                        onConfirm={() => setDisabled(user, true)}
                      >
                        Disable
                      </ConfirmButton>
                    )}{" "}
                    <button
                      type="button"
                      aria-label={`API tokens of ${user.username}`}
                      aria-expanded={panel?.kind === "tokens" && panel.username === user.username}
                      onClick={() => open("tokens", user.username)}
                    >
                      Tokens
                    </button>{" "}
                    <button
                      type="button"
                      aria-label={`Sign-in of ${user.username}`}
                      aria-expanded={panel?.kind === "sign-in" && panel.username === user.username}
                      onClick={() => open("sign-in", user.username)}
                    >
                      Sign-in
                    </button>{" "}
                    <button
                      type="button"
                      aria-label={`Set password of ${user.username}`}
                      onClick={() => open("password", user.username)}
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
      {panel?.kind === "password" && (
        <SetPasswordForm key={panel.username} username={panel.username} onDone={closePanel} />
      )}
      {panel?.kind === "role" && panelUser && <RoleForm key={panel.username} user={panelUser} onDone={closePanel} />}
      {panel?.kind === "sign-in" && panelUser && (
        <SignInForm key={panel.username} user={panelUser} onDone={closePanel} />
      )}
      {panel?.kind === "tokens" && (
        <UserTokens key={panel.username} username={panel.username} onClose={() => setPanel(null)} />
      )}
      {message && (
        <p className="success" role="status">
          {message}
        </p>
      )}
      {update.isError && <ErrorText error={update.error} />}
      {remove.isError && <ErrorText error={remove.error} />}
      <h3>Add a user</h3>
      <form className="form inline" onSubmit={onSubmit} aria-label="Create user">
        <Field label="Username">
          <input required autoComplete="off" value={username} onChange={(e) => setUsername(e.target.value)} />
        </Field>
        <PasswordInput label="Password" autoComplete="new-password" value={password} onChange={setPassword} />
        <RoleField label="Role" value={role} onChange={setRole} />
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
