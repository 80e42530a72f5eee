import { useState, type FormEvent } from "react";
import { CopyButton } from "../../components/CopyButton";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { PasswordInput } from "../../components/PasswordInput";
import { useCurrentUser } from "../auth/queries";
import { useBeginTwoFactor, useConfirmTwoFactor, useTurnOffTwoFactor } from "./queries";

/** The server's QR code (SVG markup) as an image: never inserted into the page as HTML. */
function QrCode({ svg }: { svg: string }) {
  return (
    <img
      className="qr-code"
      src={`data:image/svg+xml;utf8,${encodeURIComponent(svg)}`}
      alt="QR code to scan with your authenticator app"
      width={200}
      height={200}
    />
  );
}

function RecoveryCodes({ codes, onDone }: { codes: string[]; onDone: () => void }) {
  return (
    <div className="recovery-codes" role="region" aria-label="Recovery codes">
      <p className="success" role="status">
        Two-factor sign-in is on. Keep these recovery codes somewhere safe: each signs you in once in place of a
        code, and they are not shown again.
      </p>
      <pre>{codes.join("\n")}</pre>
      <div className="actions">
        <CopyButton text={codes.join("\n")} label="Copy the recovery codes" />
        <button type="button" className="primary" onClick={onDone}>
          I have saved them
        </button>
      </div>
    </div>
  );
}

/** The set-up: the password, then the QR code (or key) and a first code. `confirm` is the
 * section's: its answer (the recovery codes) outlives this form, which goes once it is on. */
function Enrol({ confirm }: { confirm: ReturnType<typeof useConfirmTwoFactor> }) {
  const begin = useBeginTwoFactor();
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const setup = begin.data;

  function onBegin(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    begin.mutate(password);
  }

  function onConfirm(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    confirm.mutate(code.trim());
  }

  if (!setup) {
    return (
      <form className="form inline" onSubmit={onBegin} aria-label="Set up two-factor sign-in">
        <PasswordInput label="Your password" autoComplete="current-password" value={password} onChange={setPassword} />
        <button type="submit" className="primary" disabled={begin.isPending}>
          Set up
        </button>
        {begin.isError && <ErrorText error={begin.error} />}
      </form>
    );
  }
  return (
    <form className="form" onSubmit={onConfirm} aria-label="Confirm two-factor sign-in">
      <p>Scan this with your authenticator app, then type the six digits it shows.</p>
      <QrCode svg={setup.qr_svg} />
      <p className="muted small">
        Cannot scan? Enter this key: <code data-testid="totp-secret">{setup.secret}</code>
      </p>
      <Field label="Code from the app">
        <input
          autoComplete="one-time-code"
          inputMode="numeric"
          required
          maxLength={32}
          value={code}
          onChange={(e) => setCode(e.target.value)}
        />
      </Field>
      {confirm.isError && <ErrorText error={confirm.error} />}
      <div className="actions">
        <button type="submit" className="primary" disabled={confirm.isPending}>
          Turn on
        </button>
      </div>
    </form>
  );
}

function TurnOff() {
  const off = useTurnOffTwoFactor();
  const [password, setPassword] = useState("");
  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    off.mutate(password, { onSuccess: () => setPassword("") });
  }
  return (
    <form className="form inline" onSubmit={onSubmit} aria-label="Turn off two-factor sign-in">
      <PasswordInput label="Your password" autoComplete="current-password" value={password} onChange={setPassword} />
      <button type="submit" disabled={off.isPending}>
        Turn off
      </button>
      {off.isError && <ErrorText error={off.error} />}
    </form>
  );
}

/** Your own two-factor sign-in (accounts with a password; the identity provider has its own). */
export function TwoFactorSection() {
  const user = useCurrentUser();
  const confirm = useConfirmTwoFactor();
  // Shown once, until the user says they have them (the answer is kept nowhere else).
  const codes = confirm.data?.recovery_codes ?? null;
  if (!user?.has_password) return null;
  return (
    <section aria-labelledby="two-factor-title">
      <h3 id="two-factor-title">Two-factor sign-in</h3>
      {codes ? (
        <RecoveryCodes codes={codes} onDone={() => confirm.reset()} />
      ) : user.two_factor ? (
        <>
          <p>
            On: the sign-in asks for a code from your authenticator app. {user.recovery_codes_left} recovery code
            {user.recovery_codes_left === 1 ? "" : "s"} left.
          </p>
          <TurnOff />
        </>
      ) : (
        <>
          <p className="muted">
            Off. With it on, signing in also asks for a code from an authenticator app on your phone. API tokens are
            not affected.
          </p>
          <Enrol confirm={confirm} />
        </>
      )}
    </section>
  );
}
