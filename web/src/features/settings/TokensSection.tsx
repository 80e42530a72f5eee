import { useQuery } from "@tanstack/react-query";
import { useState, type FormEvent } from "react";
import type { CreatedToken } from "../../api/types";
import { ConfirmButton } from "../../components/ConfirmButton";
import { ErrorBanner } from "../../components/ErrorBanner";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { formatDateTime } from "../../components/format";
import { Loading } from "../../components/Loading";
import { PasswordInput } from "../../components/PasswordInput";
import { RowActions, Table } from "../../components/Table";
import { useCurrentUser } from "../auth/queries";
import { tokensQueryOptions, useCreateToken, useDeleteToken } from "./queries";

function NewTokenNotice({ created, onDone }: { created: CreatedToken; onDone: () => void }) {
  const [copied, setCopied] = useState<"yes" | "failed" | null>(null);

  async function copy() {
    try {
      await navigator.clipboard.writeText(created.token);
      setCopied("yes");
    } catch {
      setCopied("failed");
    }
  }

  return (
    <div className="notice" role="region" aria-label="New API token">
      <p>
        Token <strong>{created.name}</strong> created. Copy it now: it will not be shown again.
      </p>
      <div className="token-row">
        <code className="token" data-testid="new-token">
          {created.token}
        </code>
        <button type="button" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          Done
        </button>
      </div>
      {copied === "yes" && (
        <p className="success" role="status">
          Copied to the clipboard.
        </p>
      )}
      {copied === "failed" && (
        <p className="error" role="status">
          Could not copy; select the token and copy it by hand.
        </p>
      )}
    </div>
  );
}

export function TokensSection() {
  const me = useCurrentUser();
  const tokens = useQuery(tokensQueryOptions());
  const create = useCreateToken();
  const remove = useDeleteToken();
  const [name, setName] = useState("");
  const [password, setPassword] = useState("");
  const [created, setCreated] = useState<CreatedToken | null>(null);

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const trimmed = name.trim();
    if (!trimmed) return;
    create.mutate(
      { name: trimmed, password },
      {
        onSuccess: (token) => {
          setCreated(token);
          setName("");
          setPassword("");
        },
      },
    );
  }

  return (
    <section className="card" aria-labelledby="tokens-title">
      <h2 id="tokens-title">API tokens</h2>
      <p className="muted">
        Tokens let scripts and agents call the API as you. Creating one asks for your password again; changing your
        password revokes them all.
      </p>
      {created && <NewTokenNotice created={created} onDone={() => setCreated(null)} />}
      <form className="form inline" onSubmit={onSubmit} aria-label="Create API token">
        {/* Lets password managers offer this account's password. */}
        <input type="text" name="username" autoComplete="username" value={me?.username ?? ""} readOnly hidden />
        <Field label="Token name">
          <input required autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} maxLength={100} />
        </Field>
        <PasswordInput label="Your current password" autoComplete="current-password" value={password} onChange={setPassword} />
        <button type="submit" className="primary" disabled={create.isPending}>
          Create token
        </button>
      </form>
      {create.isError && <ErrorText error={create.error} />}
      {remove.isError && <ErrorText error={remove.error} />}
      {tokens.isError ? (
        <ErrorBanner error={tokens.error} onRetry={() => void tokens.refetch()} />
      ) : !tokens.data ? (
        <Loading />
      ) : tokens.data.length === 0 ? (
        <p className="muted">No API tokens yet.</p>
      ) : (
        <Table label="API tokens" columns={["Name", "Created", "Last used"]} actions>
          {tokens.data.map((token) => (
            <tr key={token.id}>
              <td>{token.name}</td>
              <td>{formatDateTime(token.created_at)}</td>
              <td>{token.last_used_at ? formatDateTime(token.last_used_at) : "Never"}</td>
              <RowActions>
                <ConfirmButton label={`Delete token ${token.name}`} onConfirm={() => remove.mutate(token.id)}>
                  Delete
                </ConfirmButton>
              </RowActions>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
