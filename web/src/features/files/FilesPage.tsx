import { ComingSoon } from "../../components/ComingSoon";

export function FilesPage() {
  return <ComingSoon title="Files">Browse, edit, upload and download files in the stacks folder.</ComingSoon>;
}
