import { useQuery } from "@tanstack/react-query";
import { ErrorBanner } from "../../components/ErrorBanner";
import { Loading } from "../../components/Loading";
import { useHostInfo } from "../hosts/capabilities";
import { useHost } from "../hosts/host";
import { HostSwitcher, HostUnavailable } from "../hosts/HostSwitcher";
import { defaultUpdatePolicyQueryOptions, useSetDefaultUpdatePolicy } from "../stacks/queries";
import { UpdatePolicyForm } from "../stacks/UpdatePolicyForm";

/**
 * Admin only: the update policy of every stack of a host that has none of its own. The
 * host is the page's (`?host=`, chosen here): this host unless an agent is chosen.
 */
export function DefaultUpdatePolicySection() {
  const host = useHost();
  const info = useHostInfo(host);
  const unavailable = info.unavailable("updates");
  const policy = useQuery({ ...defaultUpdatePolicyQueryOptions(host), enabled: info.ready && !unavailable });
  const save = useSetDefaultUpdatePolicy();
  return (
    <section className="card" aria-labelledby="default-policy-title">
      <div className="section-head">
        <h2 id="default-policy-title">Default update policy</h2>
        <HostSwitcher page="/settings" />
      </div>
      <p className="muted">
        Followed by every stack on {info.name} that has no policy of its own (set one on the stack&rsquo;s page).
      </p>
      {unavailable ? (
        <HostUnavailable reason={unavailable} />
      ) : policy.isError ? (
        <ErrorBanner error={policy.error} onRetry={() => void policy.refetch()} />
      ) : !policy.data ? (
        <Loading />
      ) : (
        <UpdatePolicyForm
          key={String(host)}
          label="Default update policy"
          policy={policy.data}
          save={save}
          saveLabel="Save default policy"
          savedText="Default policy saved."
        />
      )}
    </section>
  );
}
