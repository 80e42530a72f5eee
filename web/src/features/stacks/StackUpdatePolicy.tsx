import { useState } from "react";
import type { StackUpdate } from "../../api/types";
import { ErrorText } from "../../components/ErrorText";
import { useCan } from "../auth/permissions";
import { useInheritUpdatePolicy, useSetUpdatePolicy } from "./queries";
import { UpdatePolicyForm } from "./UpdatePolicyForm";
import { UpdatePolicyView } from "./UpdatePolicyView";

/** The stack's update policy in force: its editor for operators and admins, read only for the others. */
export function StackUpdatePolicy({ stackId, update }: { stackId: string; update: StackUpdate }) {
  const mayEdit = useCan("stacks.autoUpdate");
  return (
    <div className="stack-policy">
      <h3 id="update-policy-title">Update policy</h3>
      <p className="muted small" data-testid="policy-source">
        {update.policy_inherited
          ? "This stack follows the host's default policy."
          : "This stack has its own policy."}
      </p>
      {mayEdit ? (
        <StackPolicyEditor stackId={stackId} update={update} />
      ) : (
        <UpdatePolicyView policy={update.policy} label="Update policy" />
      )}
    </div>
  );
}

function StackPolicyEditor({ stackId, update }: { stackId: string; update: StackUpdate }) {
  const save = useSetUpdatePolicy(stackId);
  const inherit = useInheritUpdatePolicy(stackId);
  // Bumped when the stack goes back to the default: the form starts again from it.
  const [generation, setGeneration] = useState(0);
  return (
    <>
      <UpdatePolicyForm
        key={generation}
        label="Update policy"
        policy={update.policy}
        save={save}
        saveLabel="Save policy"
        savedText="Policy saved."
      >
        {!update.policy_inherited && (
          <button
            type="button"
            disabled={inherit.isPending || save.isPending}
            onClick={() => {
              save.reset();
              inherit.mutate(undefined, { onSuccess: () => setGeneration((g) => g + 1) });
            }}
          >
            {inherit.isPending ? "Switching…" : "Use host default"}
          </button>
        )}
      </UpdatePolicyForm>
      {inherit.isError && <ErrorText error={inherit.error} />}
    </>
  );
}
