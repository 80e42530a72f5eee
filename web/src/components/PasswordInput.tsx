import { Field } from "./Field";

/**
 * A labelled password field. `autoComplete` tells password managers whether this is the
 * password the user signs in with ("current-password") or one being set ("new-password").
 */
export function PasswordInput({
  label,
  value,
  onChange,
  autoComplete,
  name,
  required = true,
  autoFocus,
  maxLength,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  autoComplete: "current-password" | "new-password";
  name?: string;
  required?: boolean;
  autoFocus?: boolean;
  maxLength?: number;
}) {
  return (
    <Field label={label}>
      <input
        type="password"
        name={name}
        autoComplete={autoComplete}
        required={required}
        autoFocus={autoFocus}
        maxLength={maxLength}
        spellCheck={false}
        value={value}
        onChange={(e) => onChange(e.target.value)}
      />
    </Field>
  );
}
