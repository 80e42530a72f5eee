import { useQuery } from "@tanstack/react-query";
import { useId, useState, type FormEvent } from "react";
import type { IdentityProviderConfig, IdentityProviderSettings, Role } from "../../api/types";
import { CopyButton } from "../../components/CopyButton";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { Loading } from "../../components/Loading";
import { PasswordInput } from "../../components/PasswordInput";
import { ROLES } from "../auth/permissions";
import { identityProviderQueryOptions, useSetIdentityProvider, useTestIdentityProvider } from "./queries";

type RoleRule = IdentityProviderConfig["roles"][number];

function CopyableUrl({ label, url }: { label: string; url: string }) {
  return (
    <div className="copyable">
      <span className="muted small">{label}</span> <code>{url}</code>{" "}
      <CopyButton text={url} label={`Copy the ${label.toLowerCase()}`} />
    </div>
  );
}

function RoleRules({
  rules,
  readOnly,
  onChange,
}: {
  rules: RoleRule[];
  readOnly: boolean;
  onChange: (rules: RoleRule[]) => void;
}) {
  const set = (index: number, rule: RoleRule) => onChange(rules.map((r, i) => (i === index ? rule : r)));
  return (
    <fieldset className="role-rules">
      <legend>Roles from groups (a user in several gets the highest)</legend>
      {rules.map((rule, index) => (
        <div className="form inline" key={index}>
          <Field label={`Group ${index + 1}`}>
            <input
              required
              maxLength={200}
              readOnly={readOnly}
              value={rule.value}
              onChange={(e) => set(index, { ...rule, value: e.target.value })}
            />
          </Field>
          <Field label={`Role of group ${index + 1}`}>
            <select
              disabled={readOnly}
              value={rule.role}
              onChange={(e) => set(index, { ...rule, role: e.target.value as Role })}
            >
              {ROLES.map((role) => (
                <option key={role} value={role}>
                  {role}
                </option>
              ))}
            </select>
          </Field>
          {!readOnly && (
            <button type="button" aria-label={`Remove group ${index + 1}`} onClick={() => onChange(rules.filter((_, i) => i !== index))}>
              Remove
            </button>
          )}
        </div>
      ))}
      {!readOnly && (
        <button type="button" onClick={() => onChange([...rules, { value: "", role: "viewer" }])}>
          Add a group
        </button>
      )}
    </fieldset>
  );
}

function ProviderForm({ shown }: { shown: IdentityProviderSettings }) {
  const save = useSetIdentityProvider();
  const test = useTestIdentityProvider();
  const [config, setConfig] = useState<IdentityProviderConfig>(shown.config);
  const [secret, setSecret] = useState("");
  // As typed (a space starts the next scope); the list is what is saved.
  const [scopes, setScopes] = useState(shown.config.scopes.join(" "));
  const readOnly = shown.from_settings_variables;
  const linkHintId = useId();
  const change = (part: Partial<IdentityProviderConfig>) => {
    test.reset();
    setConfig({ ...config, ...part });
  };
  const typed = () => ({ config: { ...config, scopes: scopes.split(/[\s,]+/).filter(Boolean) }, client_secret: secret || null });

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    test.reset();
    save.mutate(typed(), { onSuccess: () => setSecret("") });
  }

  return (
    <form className="form" onSubmit={onSubmit} aria-label="Identity provider">
      {readOnly && <p className="notice">Set by STACKYARD_OIDC_* settings variables: change them there.</p>}
      <p>Register these at your provider as the redirect URI and the post-logout redirect URI:</p>
      <CopyableUrl label="Redirect URI" url={shown.callback_url} />
      <CopyableUrl label="Post-logout redirect URI" url={shown.post_logout_url} />
      <label className="check">
        <input type="checkbox" disabled={readOnly} checked={config.enabled} onChange={(e) => change({ enabled: e.target.checked })} />{" "}
        Sign-in through the provider is on
      </label>
      <Field label="Name on the sign-in button">
        <input required maxLength={40} readOnly={readOnly} value={config.name} onChange={(e) => change({ name: e.target.value })} />
      </Field>
      <Field label="Issuer">
        <input
          type="url"
          maxLength={500}
          readOnly={readOnly}
          placeholder="https://sso.example.com/realms/homelab"
          value={config.issuer}
          onChange={(e) => change({ issuer: e.target.value })}
        />
      </Field>
      <Field label="Client ID">
        <input maxLength={255} readOnly={readOnly} value={config.client_id} onChange={(e) => change({ client_id: e.target.value })} />
      </Field>
      {readOnly ? (
        <p className="muted small">Client secret: {shown.client_secret_set ? "saved" : "not set"}.</p>
      ) : (
        <PasswordInput
          label={shown.client_secret_set ? "Client secret (saved; type a new one to replace it)" : "Client secret"}
          autoComplete="new-password"
          required={!shown.client_secret_set && config.enabled}
          value={secret}
          onChange={setSecret}
        />
      )}
      <Field label="Scopes (separated by spaces)">
        <input readOnly={readOnly} value={scopes} onChange={(e) => setScopes(e.target.value)} />
      </Field>
      <Field label="Groups claim">
        <input readOnly={readOnly} value={config.groups_claim} onChange={(e) => change({ groups_claim: e.target.value })} />
      </Field>
      <Field label="Username claim">
        <input readOnly={readOnly} value={config.username_claim} onChange={(e) => change({ username_claim: e.target.value })} />
      </Field>
      <RoleRules rules={config.roles} readOnly={readOnly} onChange={(roles) => change({ roles })} />
      <Field label="Users in no mapped group">
        <select
          disabled={readOnly}
          value={config.default_role ?? ""}
          onChange={(e) => change({ default_role: (e.target.value || null) as IdentityProviderConfig["default_role"] })}
        >
          <option value="">Refuse sign-in</option>
          <option value="viewer">viewer</option>
          <option value="operator">operator</option>
        </select>
      </Field>
      <label className="check">
        <input
          type="checkbox"
          disabled={readOnly}
          checked={config.link_accounts}
          aria-describedby={linkHintId}
          onChange={(e) => change({ link_accounts: e.target.checked })}
        />{" "}
        Link to the local account with the same email (only when the provider says it is verified)
      </label>
      {/* A sign-in through the provider trusts the provider's checks: a linked account's own
          second factor guards only its password sign-in. */}
      <p className="muted small" id={linkHintId}>
        A linked account signs in through the provider with the provider&apos;s own checks: its Stackyard two-factor
        is not asked then (only at password sign-in). Link only accounts whose provider requires a second factor.
      </p>
      <Field label="Password sign-in">
        <select
          disabled={readOnly}
          value={config.password_sign_in}
          onChange={(e) => change({ password_sign_in: e.target.value as IdentityProviderConfig["password_sign_in"] })}
        >
          <option value="everyone">Everyone</option>
          <option value="admins">Admins only (break-glass)</option>
        </select>
      </Field>
      {save.isError && <ErrorText error={save.error} />}
      {save.isSuccess && (
        <p className="success" role="status">
          Saved.
        </p>
      )}
      {test.isError && <ErrorText error={test.error} />}
      {test.isSuccess && (
        <p className="success" role="status" data-testid="provider-test">
          Test passed: {test.data.detail}.
        </p>
      )}
      {!readOnly && (
        <div className="actions">
          <button type="submit" className="primary" disabled={save.isPending}>
            Save
          </button>
          <button
            type="button"
            disabled={test.isPending || !config.issuer}
            title="Read the provider's discovery document, as Save does when sign-in through it is on; nothing is saved"
            onClick={() => {
              save.reset();
              test.mutate(typed());
            }}
          >
            {test.isPending ? "Testing…" : "Test"}
          </button>
        </div>
      )}
    </form>
  );
}

/** Admin: sign-in through an OpenID Connect identity provider. */
export function IdentityProviderSection() {
  const shown = useQuery(identityProviderQueryOptions());
  return (
    <section className="card" aria-labelledby="identity-provider-title">
      <h2 id="identity-provider-title">Identity provider</h2>
      {shown.isError ? (
        <ErrorBanner error={shown.error} onRetry={() => void shown.refetch()} />
      ) : !shown.data ? (
        <Loading />
      ) : (
        <ProviderForm shown={shown.data} />
      )}
    </section>
  );
}
