import { useId, useRef, useState, type FormEvent } from "react";
import type { Agent, AgentProbe, AgentSpec } from "../../api/types";
import { Dialog } from "../../components/Dialog";
import { ErrorText } from "../../components/ErrorText";
import { Field } from "../../components/Field";
import { FormActions } from "../../components/FormActions";
import { Fingerprint } from "./Fingerprint";
import { isHttps, missingCapabilities } from "./status";
import { useCreateAgent, useTestUnsavedAgent, useUpdateAgent } from "./queries";

type Trust = "pin" | "ca";

/** What a test of the unsaved settings found: version and compatibility, capabilities, the certificate's fingerprint. */
export function ProbeResult({ probe }: { probe: AgentProbe }) {
  const incompatible = probe.version !== null && !probe.compatible;
  const tone = probe.ok ? "good" : incompatible ? "warn" : "bad";
  const missing = probe.version !== null ? missingCapabilities(probe.capabilities) : [];
  return (
    <div className={`probe-result tone-${tone}`} role="status">
      <p>
        <strong>{probe.ok ? "Test passed" : incompatible ? "Incompatible version" : "Test failed"}</strong>: {probe.detail}
      </p>
      {probe.version !== null && (
        <p>
          Version {probe.version}, {probe.compatible ? "compatible with this Stackyard" : "which this Stackyard cannot use"}
          {probe.capabilities.length > 0 && <>; offers {probe.capabilities.join(", ")}</>}
          {missing.length > 0 && <> (not {missing.join(", ")})</>}.
        </p>
      )}
      {probe.fingerprint && (
        <p className="fingerprint">
          Certificate fingerprint (SHA-256): <Fingerprint value={probe.fingerprint} />
        </p>
      )}
    </div>
  );
}

/**
 * Add an agent (`agent` null) or edit one. The token is write-only: on an edit, empty keeps
 * the stored one. For HTTPS the agent's certificate is pinned: "Test" shows the fingerprint
 * of the certificate the agent presents, the user ticks that it is the one the agent printed
 * when it started, and saving sends that fingerprint (the server checks the agent still
 * presents it). A CA certificate can be trusted instead. An edit that keeps the address
 * keeps the trust unless asked to pin again.
 */
export function AgentDialog({
  agent,
  onClose,
  onSaved,
}: {
  agent: Agent | null;
  onClose: () => void;
  onSaved: (saved: Agent) => void;
}) {
  const editing = agent !== null;
  const create = useCreateAgent();
  const update = useUpdateAgent();
  const test = useTestUnsavedAgent();
  const save = editing ? update : create;
  const form = useRef<HTMLFormElement>(null);
  const tokenHint = useId();
  const [name, setName] = useState(agent?.name ?? "");
  const [url, setUrl] = useState(agent?.url ?? "");
  const [token, setToken] = useState("");
  const [enabled, setEnabled] = useState(agent?.enabled ?? true);
  const [trust, setTrust] = useState<Trust>(agent?.trusts_ca ? "ca" : "pin");
  const [ca, setCa] = useState("");
  const [repin, setRepin] = useState(false);
  const [confirmed, setConfirmed] = useState(false);

  const https = isHttps(url);
  const urlChanged = editing && url.trim() !== agent.url;
  const trustChanged = editing && (trust === "ca") !== agent.trusts_ca;
  // The certificate is (re)pinned from what is given: always for a new agent, on an edit when
  // the address or the kind of trust changes, or when asked.
  const pinning = https && trust === "pin" && (!editing || urlChanged || trustChanged || repin);
  const needsCa = https && trust === "ca" && (!editing || urlChanged || trustChanged);
  const fingerprint = test.data?.fingerprint ?? null;
  const canSave = !pinning || (fingerprint !== null && confirmed);

  /** A change to what the test tried makes its result (and the fingerprint it showed) stale. */
  function changed<T>(set: (value: T) => void) {
    return (value: T) => {
      set(value);
      test.reset();
      setConfirmed(false);
    };
  }

  function spec(): AgentSpec {
    return {
      name: name.trim(),
      url: url.trim(),
      token: token ? token : null,
      enabled,
      fingerprint: pinning ? fingerprint : null,
      ca_certificate: https && trust === "ca" && ca.trim() ? ca : null,
    };
  }

  function runTest() {
    if (!form.current?.reportValidity()) return;
    test.mutate(spec());
  }

  function submit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    if (!canSave) return;
    if (agent) update.mutate({ id: agent.id, spec: spec() }, { onSuccess: onSaved });
    else create.mutate(spec(), { onSuccess: onSaved });
  }

  const title = editing ? `Edit ${agent.name}` : "Add an agent";
  return (
    <Dialog title={title} onClose={onClose} className="form-dialog">
      <form ref={form} className="form" onSubmit={submit} aria-label={title}>
        <p className="muted small">
          Run <code>stackyard agent</code> on the other host with a token (<code>STACKYARD_AGENT_TOKEN</code>); it prints
          its address and, for HTTPS, its certificate's fingerprint when it starts.
        </p>
        <Field label="Name">
          <input required maxLength={100} autoComplete="off" value={name} onChange={(e) => setName(e.target.value)} />
        </Field>
        <Field label="URL">
          <input
            required
            type="url"
            maxLength={500}
            pattern="[Hh][Tt][Tt][Pp][Ss]?://.+"
            placeholder="https://nas.lan:8443"
            autoComplete="off"
            spellCheck={false}
            value={url}
            onChange={(e) => changed(setUrl)(e.target.value)}
          />
        </Field>
        <Field label="Token">
          <input
            type="password"
            required={!editing}
            maxLength={1000}
            autoComplete="off"
            spellCheck={false}
            placeholder={editing ? "stored — leave empty to keep" : undefined}
            aria-describedby={tokenHint}
            value={token}
            onChange={(e) => changed(setToken)(e.target.value)}
          />
        </Field>
        <p className="muted small" id={tokenHint}>
          Write-only: Stackyard keeps it sealed and never shows it again.
          {editing && " Testing new settings needs it typed again."}
        </p>
        {https && (
          <fieldset>
            <legend>The agent's certificate</legend>
            <label className="check">
              <input
                type="radio"
                name="trust"
                checked={trust === "pin"}
                onChange={() => changed(setTrust)("pin")}
              />
              <span>Pin the certificate the agent presents (its own, made at first start)</span>
            </label>
            <label className="check">
              <input type="radio" name="trust" checked={trust === "ca"} onChange={() => changed(setTrust)("ca")} />
              <span>Trust a CA certificate instead (the agent has a certificate that CA signed)</span>
            </label>
            {trust === "ca" && (
              <Field label="CA certificate (PEM)">
                <textarea
                  className="mono"
                  rows={5}
                  maxLength={100_000}
                  spellCheck={false}
                  required={needsCa}
                  placeholder={
                    editing && agent.trusts_ca ? "stored — leave empty to keep" : "-----BEGIN CERTIFICATE-----"
                  }
                  value={ca}
                  onChange={(e) => changed(setCa)(e.target.value)}
                />
              </Field>
            )}
            {editing && trust === "pin" && agent.fingerprint && !urlChanged && !trustChanged && (
              <>
                <p className="fingerprint small">
                  Pinned: <Fingerprint value={agent.fingerprint} />
                </p>
                <label className="check">
                  <input type="checkbox" checked={repin} onChange={(e) => changed(setRepin)(e.target.checked)} />
                  <span>Pin the certificate it presents now (after the agent was reinstalled or given a new one)</span>
                </label>
              </>
            )}
          </fieldset>
        )}
        {editing && (
          <label className="check">
            <input type="checkbox" checked={enabled} onChange={(e) => setEnabled(e.target.checked)} />
            <span>Enabled (offered by the host switcher and asked by the fleet dashboard)</span>
          </label>
        )}
        {test.data && <ProbeResult probe={test.data} />}
        {pinning && fingerprint && (
          <label className="check confirm-fingerprint">
            <input type="checkbox" checked={confirmed} onChange={(e) => setConfirmed(e.target.checked)} />
            <span>This is the fingerprint the agent printed when it started (its log line “Agent TLS certificate fingerprint”)</span>
          </label>
        )}
        {pinning && !fingerprint && !test.isPending && (
          <p className="muted small">Test the agent to see its certificate&apos;s fingerprint, then confirm it to save.</p>
        )}
        {test.isError && <ErrorText error={test.error} />}
        {save.isError && <ErrorText error={save.error} />}
        <FormActions
          label={editing ? "Save changes" : "Add the agent"}
          busyLabel="Saving…"
          busy={save.isPending}
          disabled={!canSave}
          onCancel={onClose}
        >
          <button type="button" onClick={runTest} disabled={test.isPending || (editing && !token)}>
            {test.isPending ? "Testing…" : "Test"}
          </button>
        </FormActions>
      </form>
    </Dialog>
  );
}
