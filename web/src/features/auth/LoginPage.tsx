import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import { useLocation, useNavigate, useSearchParams } from "react-router";
import { ApiError, errorMessage } from "../../api/errors";
import { Field } from "../../components/Field";
import { PasswordInput } from "../../components/PasswordInput";
import { away } from "./leave";
import { providerRefusalMessage } from "./providerRefusal";
import type { LoginLocationState } from "./RequireAuth";
import { signInOptionsQueryOptions, useLogin } from "./queries";

function targetAfterLogin(state: unknown): string {
  const from = (state as LoginLocationState | null)?.from;
  // Only same-app paths; never bounce back to the sign-in page itself.
  if (typeof from === "string" && from.startsWith("/") && !from.startsWith("//") && !from.startsWith("/login")) {
    return from;
  }
  return "/";
}

function loginErrorMessage(err: unknown): string {
  const message = errorMessage(err);
  if (err instanceof ApiError && err.status === 429 && err.retryAfter !== null && !message.includes(String(err.retryAfter))) {
    return `${message} (try again in ${err.retryAfter} s)`;
  }
  return message;
}

/** "Sign in with <provider>": a navigation (the provider's pages, then back here signed in). */
function ProviderSignIn({ name, startUrl, then }: { name: string; startUrl: string; then: string }) {
  return (
    <div className="provider-sign-in">
      <button
        type="button"
        className="primary"
        onClick={() => away.leaveFor(`${startUrl}?next=${encodeURIComponent(then)}`)}
      >
        Sign in with {name}
      </button>
      <p className="muted small separator">or with a password</p>
    </div>
  );
}

export function LoginPage() {
  const location = useLocation();
  const navigate = useNavigate();
  const [search] = useSearchParams();
  const options = useQuery(signInOptionsQueryOptions());
  const login = useLogin();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");
  const [code, setCode] = useState("");
  const [codeNeeded, setCodeNeeded] = useState(false);
  const then = targetAfterLogin(location.state);
  // Why the identity provider's sign-in came back here: a code the server sent, shown as
  // a message of ours (never the address's own text: anyone can make up a link).
  const refusal = search.get("error");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const credentials = { username: username.trim(), password, ...(codeNeeded ? { code: code.trim() } : {}) };
    login.mutate(credentials, {
      onSuccess: (answer) => {
        if (answer.code_needed) {
          setCodeNeeded(true);
          return;
        }
        void navigate(then, { replace: true });
      },
    });
  }

  const provider = options.data?.provider;
  return (
    <main className="login-page">
      <form className="card login-card" onSubmit={onSubmit} aria-labelledby="login-title">
        <h1 id="login-title">
          Sign in to <span className="brand">Stackyard</span>
        </h1>
        {refusal ? (
          <p className="error" role="alert">
            {providerRefusalMessage(refusal, options.data?.provider?.name)}
          </p>
        ) : null}
        {provider && <ProviderSignIn name={provider.name} startUrl={provider.start_url} then={then} />}
        {!codeNeeded ? (
          <>
            <Field label="Username">
              <input
                name="username"
                autoComplete="username"
                autoFocus={!provider}
                required
                value={username}
                onChange={(e) => setUsername(e.target.value)}
              />
            </Field>
            <PasswordInput
              label="Password"
              name="password"
              autoComplete="current-password"
              value={password}
              onChange={setPassword}
            />
          </>
        ) : (
          <Field label="Code from your authenticator app (or a recovery code)">
            <input
              name="code"
              autoComplete="one-time-code"
              inputMode="text"
              autoFocus
              required
              maxLength={32}
              value={code}
              onChange={(e) => setCode(e.target.value)}
            />
          </Field>
        )}
        {login.isError && (
          <p className="error" role="alert">
            {loginErrorMessage(login.error)}
          </p>
        )}
        <button type="submit" className={provider ? undefined : "primary"} disabled={login.isPending}>
          {login.isPending ? "Signing in…" : codeNeeded ? "Verify" : "Sign in"}
        </button>
        {codeNeeded && (
          <button
            type="button"
            className="link-button"
            onClick={() => {
              setCodeNeeded(false);
              setCode("");
              setPassword("");
              login.reset();
            }}
          >
            Use another account
          </button>
        )}
        {options.data?.password_sign_in === "admins" && (
          <p className="muted small">Password sign-in is kept for admins.</p>
        )}
      </form>
    </main>
  );
}
