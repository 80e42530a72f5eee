import { useState, type FormEvent } from "react";
import { useLocation, useNavigate } from "react-router";
import { ApiError, errorMessage } from "../../api/errors";
import { Field } from "../../components/Field";
import { PasswordInput } from "../../components/PasswordInput";
import type { LoginLocationState } from "./RequireAuth";
import { useLogin } from "./queries";

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

export function LoginPage() {
  const location = useLocation();
  const navigate = useNavigate();
  const login = useLogin();
  const [username, setUsername] = useState("");
  const [password, setPassword] = useState("");

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    login.mutate(
      { username: username.trim(), password },
      { onSuccess: () => void navigate(targetAfterLogin(location.state), { replace: true }) },
    );
  }

  return (
    <main className="login-page">
      <form className="card login-card" onSubmit={onSubmit} aria-labelledby="login-title">
        <h1 id="login-title">
          Sign in to <span className="brand">Stackyard</span>
        </h1>
        <Field label="Username">
          <input
            name="username"
            autoComplete="username"
            autoFocus
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
        {login.isError && (
          <p className="error" role="alert">
            {loginErrorMessage(login.error)}
          </p>
        )}
        <button type="submit" className="primary" disabled={login.isPending}>
          {login.isPending ? "Signing in…" : "Sign in"}
        </button>
      </form>
    </main>
  );
}
