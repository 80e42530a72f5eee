import { useState, type FormEvent } from "react";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { useCurrentUser } from "../auth/queries";
import { useChangePassword } from "./queries";

export function AccountSection() {
  const user = useCurrentUser();
  const change = useChangePassword();
  const [current, setCurrent] = useState("");
  const [next, setNext] = useState("");
  const [confirm, setConfirm] = useState("");
  const [mismatch, setMismatch] = useState(false);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (next !== confirm) {
      setMismatch(true);
      return;
    }
    setMismatch(false);
    change.mutate(
      { current_password: current, new_password: next },
      {
        onSuccess: () => {
          setCurrent("");
          setNext("");
          setConfirm("");
        },
      },
    );
  }

  return (
    <section className="card" aria-labelledby="account-title">
      <h2 id="account-title">Account</h2>
      {user && (
        <p className="muted">
          Signed in as <strong>{user.username}</strong> ({user.role}).
        </p>
      )}
      <form className="form" onSubmit={onSubmit} aria-label="Change password">
        {/* Lets password managers tie the new password to this account. */}
        <input type="text" name="username" autoComplete="username" value={user?.username ?? ""} readOnly hidden />
        <Field label="Current password">
          <input
            type="password"
            autoComplete="current-password"
            required
            value={current}
            onChange={(e) => setCurrent(e.target.value)}
          />
        </Field>
        <Field label="New password">
          <input
            type="password"
            autoComplete="new-password"
            required
            value={next}
            onChange={(e) => setNext(e.target.value)}
          />
        </Field>
        <Field label="Confirm new password">
          <input
            type="password"
            autoComplete="new-password"
            required
            value={confirm}
            onChange={(e) => setConfirm(e.target.value)}
          />
        </Field>
        {mismatch && (
          <p className="error" role="alert">
            The new passwords do not match.
          </p>
        )}
        {change.isError && <ErrorText error={change.error} />}
        {change.isSuccess && (
          <p className="success" role="status">
            Password changed.
          </p>
        )}
        <div className="actions">
          <button type="submit" className="primary" disabled={change.isPending}>
            Change password
          </button>
        </div>
      </form>
    </section>
  );
}
