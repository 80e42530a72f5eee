import { useState, type FormEvent } from "react";
import { ErrorText } from "../../components/ErrorText";
import { PasswordInput } from "../../components/PasswordInput";
import { useCurrentUser } from "../auth/queries";
import { useChangePassword } from "./queries";
import { TwoFactorSection } from "./TwoFactorSection";

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
      {user && !user.has_password && (
        <p className="muted">You sign in through your identity provider: your password and second factor are kept there.</p>
      )}
      {/* Until a required two-factor sign-in is set up, the server refuses a new password. */}
      {user?.has_password && !user.two_factor_due && (
        <form className="form" onSubmit={onSubmit} aria-label="Change password">
          {/* Lets password managers tie the new password to this account. */}
          <input type="text" name="username" autoComplete="username" value={user?.username ?? ""} readOnly hidden />
          <PasswordInput label="Current password" autoComplete="current-password" value={current} onChange={setCurrent} />
          <PasswordInput label="New password" autoComplete="new-password" value={next} onChange={setNext} />
          <PasswordInput label="Confirm new password" autoComplete="new-password" value={confirm} onChange={setConfirm} />
          <p className="muted small">Changing it ends your other sign-ins and revokes all your API tokens.</p>
          {mismatch && (
            <p className="error" role="alert">
              The new passwords do not match.
            </p>
          )}
          {change.isError && <ErrorText error={change.error} />}
          {change.isSuccess && (
            <p className="success" role="status">
              Password changed. Your other sign-ins have ended and all your API tokens were revoked; this sign-in
              stays.
            </p>
          )}
          <div className="actions">
            <button type="submit" className="primary" disabled={change.isPending}>
              Change password
            </button>
          </div>
        </form>
      )}
      <TwoFactorSection />
    </section>
  );
}
