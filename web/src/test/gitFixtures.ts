import type { GitCommit, GitPreview, GitRepository, GitStackView } from "../api/types";

export const SHA_1 = "1111111111111111111111111111111111111111";
export const SHA_2 = "2222222222222222222222222222222222222222";

export function makeRepository(overrides: Partial<GitRepository> = {}): GitRepository {
  return {
    id: "r1",
    name: "infra",
    url: "https://git.example.com/ops/infra.git",
    ref: "main",
    auth: "none",
    username: "git",
    poll_seconds: 300,
    require_signed: false,
    trusted_keys: [],
    host_key: null,
    host_key_fingerprint: null,
    public_key: null,
    has_token: false,
    webhook: false,
    last_fetch: { at: "2025-03-01T10:00:00Z", commit: SHA_1, error: null },
    ...overrides,
  };
}

export function makeCommit(overrides: Partial<GitCommit> = {}): GitCommit {
  return {
    sha: SHA_1,
    short: SHA_1.slice(0, 12),
    subject: "web: first version",
    author: "Ada",
    at: "2025-03-01T09:00:00Z",
    url: null,
    ...overrides,
  };
}

export function makeGitStack(overrides: Partial<GitStackView> = {}): GitStackView {
  return {
    stack: "web",
    repository: "r1",
    repository_name: "infra",
    ref: "main",
    path: "stacks/web",
    policy: "notify",
    local_edits: false,
    deployed: makeCommit(),
    pending: null,
    last_sync: { at: "2025-03-01T10:00:00Z", outcome: "deployed", commit: SHA_1, detail: null, by: "alice" },
    diverged: false,
    edited: [],
    ...overrides,
  };
}

export const COMPOSE_DIFF = `--- a/compose.yaml
+++ b/compose.yaml
@@ -1,4 +1,4 @@
 services:
   app:
-    image: nginx:1.27
+    image: nginx:1.28
 # end
`;

export function makePreview(overrides: Partial<GitPreview> = {}): GitPreview {
  return {
    stack: "web",
    commit: makeCommit({ sha: SHA_2, short: SHA_2.slice(0, 12), subject: "web: nginx 1.28" }),
    changes: [{ path: "compose.yaml", change: "modified", diff: COMPOSE_DIFF }],
    overwrites: [],
    ...overrides,
  };
}
