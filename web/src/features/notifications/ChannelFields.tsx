import { useId, type InputHTMLAttributes } from "react";
import type { ChannelField } from "../../api/types";
import type { Values } from "./channelDraft";

type InputProps = InputHTMLAttributes<HTMLInputElement>;

/** The input a field's type asks for (a secret is a password, whatever it holds). */
function inputProps(field: ChannelField): InputProps {
  if (field.secret) return { type: "password", autoComplete: "new-password" };
  switch (field.type) {
    case "url":
      return { type: "url", inputMode: "url", placeholder: field.default ? undefined : "https://" };
    case "number":
      // The server takes 1 to 65535 (a port).
      return { type: "number", min: 1, max: 65535 };
    case "email":
      return { type: "email", autoComplete: "off" };
    case "emails":
      return { type: "email", multiple: true, autoComplete: "off" };
    default:
      return { type: "text", autoComplete: "off" };
  }
}

/**
 * One field of a channel's form as the catalogue describes it: its label (marked when
 * required), the input its type asks for (a select of its choices), its help below. A
 * secret is write-only: a stored one is never shown, only said to be there; it is kept
 * when left empty, and an optional one can be removed.
 */
function CatalogueField({
  field,
  value,
  stored,
  removed,
  onChange,
  onRemove,
}: {
  field: ChannelField;
  value: string;
  stored: boolean;
  removed: boolean;
  onChange: (value: string) => void;
  onRemove: (removed: boolean) => void;
}) {
  const id = useId();
  const helpId = useId();
  const required = field.required && !(field.secret && stored);
  const common = {
    id,
    required,
    "aria-describedby": field.help ? helpId : undefined,
  };
  return (
    <div className={field.secret ? "field secret-field" : "field"}>
      <span>
        <label htmlFor={id}>{field.label}</label>
        {field.required && (
          <span className="required-mark" aria-hidden="true">
            {" "}
            *
          </span>
        )}
      </span>
      {field.type === "select" && !field.secret ? (
        <select {...common} value={value} onChange={(event) => onChange(event.target.value)}>
          {!required && <option value="">{field.default ? `Default (${field.default})` : "—"}</option>}
          {field.choices.map((choice) => (
            <option key={choice} value={choice}>
              {choice}
            </option>
          ))}
        </select>
      ) : (
        <input
          {...common}
          {...inputProps(field)}
          maxLength={2000}
          spellCheck={false}
          value={removed ? "" : value}
          disabled={removed}
          placeholder={stored ? "stored — leave empty to keep" : inputProps(field).placeholder}
          onChange={(event) => onChange(event.target.value)}
        />
      )}
      {field.help && (
        <p className="muted small" id={helpId}>
          {field.help}
        </p>
      )}
      {stored && !field.required && (
        <label className="check">
          <input type="checkbox" checked={removed} onChange={(event) => onRemove(event.target.checked)} />
          <span>Remove the stored {field.label.toLowerCase()}</span>
        </label>
      )}
    </div>
  );
}

/**
 * The fields of a kind of channel, drawn from the catalogue's specs: settings first as
 * listed, secrets write-only (`stored` names those saved; `removed` those to remove).
 */
export function ChannelFields({
  fields,
  values,
  stored,
  removed,
  onChange,
  onRemove,
}: {
  fields: readonly ChannelField[];
  values: Values;
  stored: ReadonlySet<string>;
  removed: ReadonlySet<string>;
  onChange: (name: string, value: string) => void;
  onRemove: (name: string, removed: boolean) => void;
}) {
  return (
    <>
      {fields.map((field) => (
        <CatalogueField
          key={field.name}
          field={field}
          value={values[field.name] ?? ""}
          stored={field.secret && stored.has(field.name)}
          removed={removed.has(field.name)}
          onChange={(value) => onChange(field.name, value)}
          onRemove={(on) => onRemove(field.name, on)}
        />
      ))}
      {fields.some((f) => f.secret) && (
        <p className="muted small">Secrets are write-only: once saved they are never shown again.</p>
      )}
    </>
  );
}
