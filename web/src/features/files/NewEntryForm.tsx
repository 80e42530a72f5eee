import { useState, type FormEvent } from "react";
import { errorMessage } from "../../api/errors";
import { Field } from "../../components/Field";
import { joinPath, nameProblem } from "./paths";
import { useCreateFile, useMakeFolder } from "./queries";
import { FormActions } from "../../components/FormActions";

/** An inline form for the name of a new folder or file in `folder`. */
export function NewEntryForm({
  kind,
  folder,
  onDone,
  onCancel,
}: {
  kind: "folder" | "file";
  folder: string;
  onDone: (path: string) => void;
  onCancel: () => void;
}) {
  const makeFolder = useMakeFolder();
  const createFile = useCreateFile();
  const mutation = kind === "folder" ? makeFolder : createFile;
  const [name, setName] = useState("");
  const [problem, setProblem] = useState<string | null>(null);
  const label = kind === "folder" ? "Folder name" : "File name";

  function onSubmit(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const issue = nameProblem(name);
    setProblem(issue);
    if (issue) return;
    const path = joinPath(folder, name.trim());
    mutation.mutate(path, { onSuccess: (created) => onDone(created.path) });
  }

  return (
    <form className="form inline card new-entry" onSubmit={onSubmit} aria-label={kind === "folder" ? "New folder" : "New file"}>
      <Field label={label}>
        <input autoFocus value={name} onChange={(e) => setName(e.target.value)} />
      </Field>
      <FormActions label="Create" busyLabel="Creating…" busy={mutation.isPending} onCancel={onCancel} />
      {(problem || mutation.isError) && (
        <p className="error" role="alert">
          {problem ?? errorMessage(mutation.error)}
        </p>
      )}
    </form>
  );
}
