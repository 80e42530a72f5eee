import { useId } from "react";
import { Field } from "../../components/Field";
import type { SecretName } from "./destinationTypes";

const SECRET_LABELS: Record<SecretName, string> = {
  password: "Password",
  private_key: "Private key",
  passphrase: "Key passphrase",
  secret_key: "Secret key",
};

const SECRET_HINTS: Partial<Record<SecretName, string>> = {
  private_key: "OpenSSH or PEM format. A password or a private key is needed.",
  passphrase: "Only when the private key is encrypted.",
};

/** A write-only secret: a stored one is never shown, only said to be there. */
function SecretField({
  name,
  value,
  stored,
  removed,
  onChange,
  onRemove,
}: {
  name: SecretName;
  value: string;
  stored: boolean;
  removed: boolean;
  onChange: (value: string) => void;
  onRemove: (removed: boolean) => void;
}) {
  const hintId = useId();
  const hint = SECRET_HINTS[name];
  const common = {
    value: removed ? "" : value,
    disabled: removed,
    placeholder: stored ? "stored — leave empty to keep" : undefined,
    autoComplete: "off",
    spellCheck: false,
    "aria-describedby": hint ? hintId : undefined,
  };
  return (
    <div className="secret-field">
      <Field label={SECRET_LABELS[name]}>
        {name === "private_key" ? (
          <textarea
            {...common}
            rows={4}
            maxLength={32768}
            className="mono"
            onChange={(event) => onChange(event.target.value)}
          />
        ) : (
          <input {...common} type="password" maxLength={1024} onChange={(event) => onChange(event.target.value)} />
        )}
      </Field>
      {hint && (
        <p className="muted small" id={hintId}>
          {hint}
        </p>
      )}
      {stored && (
        <label className="check">
          <input type="checkbox" checked={removed} onChange={(event) => onRemove(event.target.checked)} />
          <span>Remove the stored {SECRET_LABELS[name].toLowerCase()}</span>
        </label>
      )}
    </div>
  );
}

/**
 * The secrets a destination signs in with (`names`), write-only: those `stored` can be kept
 * (left empty), replaced or removed. Nothing when its type has none.
 */
export function SecretFields({
  names,
  values,
  stored,
  removed,
  onChange,
  onRemove,
}: {
  names: readonly SecretName[];
  values: Partial<Record<SecretName, string>>;
  stored: ReadonlySet<string>;
  removed: ReadonlySet<SecretName>;
  onChange: (name: SecretName, value: string) => void;
  onRemove: (name: SecretName, removed: boolean) => void;
}) {
  if (names.length === 0) return null;
  return (
    <fieldset>
      <legend>Sign-in secrets (write-only: never shown again)</legend>
      {names.map((name) => (
        <SecretField
          key={name}
          name={name}
          value={values[name] ?? ""}
          stored={stored.has(name)}
          removed={removed.has(name)}
          onChange={(value) => onChange(name, value)}
          onRemove={(on) => onRemove(name, on)}
        />
      ))}
    </fieldset>
  );
}
