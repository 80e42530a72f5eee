import type { S3Settings } from "../../api/types";
import { Field } from "../../components/Field";

export const NEW_S3: S3Settings = {
  type: "s3",
  endpoint_url: "",
  region: "us-east-1",
  bucket: "",
  prefix: "",
  access_key: "",
  path_style: true,
};

export function s3Settings(draft: S3Settings): S3Settings {
  return { ...draft, endpoint_url: draft.endpoint_url.trim(), bucket: draft.bucket.trim() };
}

/** Where in S3-compatible object storage: the endpoint, region, bucket and prefix, the access key. */
export function S3Form({ draft, onChange }: { draft: S3Settings; onChange: (patch: Partial<S3Settings>) => void }) {
  return (
    <>
      <Field label="Endpoint URL">
        <input
          required
          type="url"
          maxLength={500}
          placeholder="https://s3.eu-central-1.amazonaws.com"
          value={draft.endpoint_url}
          onChange={(e) => onChange({ endpoint_url: e.target.value })}
        />
      </Field>
      <Field label="Region">
        <input maxLength={64} value={draft.region} onChange={(e) => onChange({ region: e.target.value })} />
      </Field>
      <Field label="Bucket">
        <input required minLength={3} maxLength={63} value={draft.bucket} onChange={(e) => onChange({ bucket: e.target.value })} />
      </Field>
      <Field label="Prefix (folder in the bucket)">
        <input maxLength={500} value={draft.prefix} onChange={(e) => onChange({ prefix: e.target.value })} />
      </Field>
      <Field label="Access key">
        <input
          required
          maxLength={256}
          autoComplete="off"
          spellCheck={false}
          value={draft.access_key}
          onChange={(e) => onChange({ access_key: e.target.value })}
        />
      </Field>
      <label className="check">
        <input type="checkbox" checked={draft.path_style} onChange={(e) => onChange({ path_style: e.target.checked })} />
        <span>Path-style addressing (endpoint/bucket/key; most self-hosted services need it)</span>
      </label>
    </>
  );
}
