import type { components, operations, paths } from "./schema";

type JsonContent<T> = T extends { content: { "application/json": infer B } } ? B : never;

type SuccessResponse<Op> = Op extends { responses: infer R }
  ? 200 extends keyof R
    ? R[200]
    : 201 extends keyof R
      ? R[201]
      : 202 extends keyof R
        ? R[202]
        : never
  : never;

/** The JSON body of the success response of `METHOD path`, from the generated schema. */
type ResponseBody<P extends keyof paths, M extends keyof paths[P]> = JsonContent<SuccessResponse<paths[P][M]>>;

/** The JSON request body of `METHOD path`, from the generated schema. */
type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends {
  requestBody?: infer RB;
}
  ? JsonContent<NonNullable<RB>>
  : never;

export type User = ResponseBody<"/api/auth/me", "get">;
export type Role = User["role"];
export type Health = ResponseBody<"/api/health", "get">;
export type SystemInfo = ResponseBody<"/api/system/info", "get">;
/** The running version, the latest release, whether self-update is possible (and why not), the last one. */
export type UpdateStatus = ResponseBody<"/api/system/update", "get">;
export type LastUpdate = NonNullable<UpdateStatus["last_update"]>;
export type UpdateStarted = ResponseBody<"/api/system/update", "post">;
export type AuditPage = ResponseBody<"/api/audit", "get">;
export type AuditEntry = AuditPage["items"][number];
export type UserRow = ResponseBody<"/api/users", "get">[number];
export type NewUser = RequestBody<"/api/users", "post">;
export type UserChange = RequestBody<"/api/users/{username}", "patch">;
/** Sign-in through an identity provider, as an admin sees it (the client secret never shown). */
export type IdentityProviderSettings = ResponseBody<"/api/identity-provider", "get">;
export type IdentityProviderConfig = IdentityProviderSettings["config"];
export type IdentityProviderChange = RequestBody<"/api/identity-provider", "put">;
export type TwoFactorSetup = ResponseBody<"/api/auth/two-factor/setup", "post">;
export type ApiToken = ResponseBody<"/api/auth/tokens", "get">[number];
export type NewToken = RequestBody<"/api/auth/tokens", "post">;
export type UserToken = ResponseBody<"/api/users/{username}/tokens", "get">[number];
export type CreatedToken = ResponseBody<"/api/auth/tokens", "post">;

export type Stack = ResponseBody<"/api/stacks", "get">[number];
export type StackState = Stack["state"];
export type StackService = Stack["services"][number];
export type StackDetail = ResponseBody<"/api/stacks/{stack_id}", "get">;
export type NewStack = RequestBody<"/api/stacks", "post">;
export type StackAction = paths["/api/stacks/{stack_id}/actions/{action}"]["post"]["parameters"]["path"]["action"];
/** A stack's run (`GET /api/stacks/{id}/run` answers one, or null when it never ran). */
export type Run = components["schemas"]["RunState"];
export type RunProgress = Run["progress"];
export type RunImage = RunProgress["images"][number];
export type RunLine = RunProgress["lines"][number];
export type UpdateSummary = ResponseBody<"/api/stacks/updates", "get">;
export type StackUpdate = UpdateSummary["stacks"][number];
export type ImageUpdate = StackUpdate["images"][number];
/** What a stack's updates follow (its own, or its host's default). */
export type UpdatePolicy = components["schemas"]["UpdatePolicy"];
/** How an update (by hand or by the auto-update pass) went. */
export type UpdateOutcome = components["schemas"]["UpdateOutcome"];
/** How big a version step a newer image is. */
export type UpdateJump = NonNullable<ImageUpdate["jump"]>;
/** What a newer image's labels say of its release. */
export type ImageRelease = components["schemas"]["Release"];
/** The pull quota a registry announced with its last answer. */
export type RegistryQuota = UpdateSummary["registries"][number];
export type DeletePlan = ResponseBody<"/api/stacks/{stack_id}/delete-plan", "get">;
export type DeleteResult = ResponseBody<"/api/stacks/{stack_id}", "delete">;
export type NewRegistry = RequestBody<"/api/registries", "put">;

export type Folder = ResponseBody<"/api/files", "get">;
export type FileEntry = Folder["entries"][number];
export type TextFile = ResponseBody<"/api/files/content", "get">;
export type UploadedFile = ResponseBody<"/api/files/upload", "put">;

/** One batch of a stack's log stream (Server-Sent Events: the schema's item type). */
export type LogBatch = components["schemas"]["LogBatch"];
export type LogLine = LogBatch["lines"][number];
export type HostUsage = ResponseBody<"/api/usage", "get">;
export type ContainerUsage = HostUsage["containers"][number];
export type UsageTotals = HostUsage["total"];

export type Inventory = ResponseBody<"/api/stacks/{stack_id}/backup/inventory", "get">;
export type BackupAsset = Inventory["assets"][number];
export type ArchiveInfo = ResponseBody<"/api/backups", "get">[number];
export type BackupManifest = ResponseBody<"/api/backups/{name}", "get">;
export type Fidelity = components["schemas"]["Fidelity"];
export type VerifyReport = ResponseBody<"/api/backups/{name}/verify", "post">;
export type NewBackup = RequestBody<"/api/stacks/{stack_id}/backups", "post">;
export type RestoreOptions = RequestBody<"/api/backups/{name}/restore", "post">;
export type RestorePreview = ResponseBody<"/api/backups/{name}/restore/preview", "post">;
/** What a restore drill of an archive found ("restore verified", or why not). */
export type DrillRecord = components["schemas"]["DrillRecord"];

export type Destination = ResponseBody<"/api/destinations", "get">[number];
export type DestinationSettings = Destination["settings"];
export type DestinationType = DestinationSettings["type"];
export type SftpSettings = components["schemas"]["SftpSettings"];
export type S3Settings = components["schemas"]["S3Settings"];
export type NfsSettings = components["schemas"]["NfsSettings"];
/** A restic repository on a folder, an SFTP server or S3 (its own key and the recovery key open it). */
export type RepositorySettings = components["schemas"]["RepositorySettings"];
export type RepositoryLocation = RepositorySettings["location"];
export type FolderLocation = components["schemas"]["FolderLocation"];
/** A new repository, or with `recovery_key` one recovered (`POST /api/destinations/repositories`). */
export type NewRepository = RequestBody<"/api/destinations/repositories", "post">;
/** The repository made: its destination, and the recovery key shown this once (null when recovered). */
export type MadeRepository = ResponseBody<"/api/destinations/repositories", "post">;
/** Write-only sign-in secrets: sent, never read back (`secrets_set` names those stored). */
export type DestinationSecrets = components["schemas"]["Secrets"];
export type NewDestination = RequestBody<"/api/destinations", "post">;
export type DestinationChange = RequestBody<"/api/destinations/{destination_id}", "patch">;
export type UnsavedDestinationTest = RequestBody<"/api/destinations/test", "post">;
export type DestinationTestResult = ResponseBody<"/api/destinations/test", "post">;
export type RemoteArchive = ResponseBody<"/api/destinations/{destination_id}/archives", "get">[number];
/** A repository destination's use: stored against its backups as archives, backups per stack. */
export type RepositoryUse = ResponseBody<"/api/destinations/{destination_id}/repository", "get">;

export type Schedule = ResponseBody<"/api/schedules", "get">[number];
export type ScheduleSpec = RequestBody<"/api/schedules", "post">;
export type ScheduleRun = ResponseBody<"/api/schedules/{schedule_id}/runs", "get">[number];
export type Timetable = ResponseBody<"/api/timetable", "get">;

export type Agent = ResponseBody<"/api/agents", "get">[number];
/** What a user gives for an agent (the token is write-only: null keeps the stored one). */
export type AgentSpec = RequestBody<"/api/agents", "post">;
export type AgentProbe = ResponseBody<"/api/agents/test", "post">;
/** An agent that dials the central, just made: its one-time enrolment token (shown this once) and how to use it. */
export type NewTunnelAgent = ResponseBody<"/api/agents/tunnel", "post">;

export type Fleet = ResponseBody<"/api/dashboard/fleet", "get">;
export type Attention = Fleet["attention"][number];
export type Severity = Attention["severity"];
export type Kpis = Fleet["kpis"];
export type HostCard = Fleet["hosts"][number];
export type HostStatus = HostCard["status"];
export type HostReport = NonNullable<HostCard["report"]>;
export type HostResources = HostReport["resources"];

/** A `docker run` command as a compose file (`POST /api/stacks/convert`). */
export type ConvertedCompose = components["schemas"]["Converted"];

/** A container of a host that no stack owns (`GET /api/containers`). */
export type OutsideContainer = components["schemas"]["OutsideContainer"];
export type ContainerAction = operations["outsideContainerAction"]["parameters"]["path"]["action"];

/** CPU and memory of a stack's containers over the last minutes. */
export type UsageHistory = components["schemas"]["UsageHistory"];
export type UsagePoint = components["schemas"]["UsagePoint"];

/** What can be sent (events) and where (kinds of channel, each with the fields of its form). */
export type NotificationCatalogue = ResponseBody<"/api/notifications/catalogue", "get">;
export type EventKind = NotificationCatalogue["events"][number];
export type EventName = EventKind["name"];
export type NotificationSeverity = EventKind["severity"];
export type ChannelKindSpec = NotificationCatalogue["channels"][number];
export type ChannelKind = ChannelKindSpec["kind"];
export type ChannelField = ChannelKindSpec["fields"][number];
/** A channel: its secrets are write-only (`secrets_set` names those stored). */
export type Channel = ResponseBody<"/api/notifications/channels", "get">[number];
export type NewChannel = RequestBody<"/api/notifications/channels", "post">;
export type ChannelChange = RequestBody<"/api/notifications/channels/{channel_id}", "patch">;
export type UnsavedChannelTest = RequestBody<"/api/notifications/channels/test", "post">;
export type ChannelTestResult = ResponseBody<"/api/notifications/channels/test", "post">;
export type Delivery = ResponseBody<"/api/notifications/channels/{channel_id}/deliveries", "get">[number];
export type NotificationRule = ResponseBody<"/api/notifications/rules", "get">[number];
export type NotificationRuleSpec = RequestBody<"/api/notifications/rules", "post">;

/** A git repository stacks come from (its token, deploy key and webhook secret never shown). */
export type GitRepository = ResponseBody<"/api/git/repositories", "get">[number];
/** What an admin gives for a repository (the token is write-only: null keeps the kept one). */
export type GitRepositorySpec = RequestBody<"/api/git/repositories", "post">;
export type GitAuth = GitRepository["auth"];
/** A stack made of a repository's folder: its commits, policy and last sync. */
export type GitStackView = components["schemas"]["GitStackView"];
export type GitPolicy = GitStackView["policy"];
export type GitCommit = components["schemas"]["Commit"];
export type GitSyncOutcome = components["schemas"]["SyncOutcome"];
export type GitOutcome = GitSyncOutcome["outcome"];
/** What applying a commit to a stack (or adopting a folder) would change in its folder. */
export type GitPreview = components["schemas"]["Preview"];
export type GitFileChange = GitPreview["changes"][number];
export type GitSyncReport = ResponseBody<"/api/git/repositories/{repo_id}/sync", "post">;
/** A webhook's path and secret, shown once when made. */
export type GitWebhook = ResponseBody<"/api/git/repositories/{repo_id}/webhook", "post">;
export type NewGitStack = RequestBody<"/api/git/stacks", "post">;
export type GitStackSource = RequestBody<"/api/git/stacks/{stack_id}/adoption", "post">;
export type GitStackChange = RequestBody<"/api/git/stacks/{stack_id}", "patch">;

/** A host's disk: images, volumes, networks, containers of no stack and build cache, what uses each (`GET /api/disk`). */
export type DiskReport = ResponseBody<"/api/disk", "get">;
/** Bytes per kind on a host and what a prune may free (on the disk page and each host's fleet report). */
export type DiskSummary = DiskReport["summary"];
export type DiskImage = DiskReport["images"][number];
export type DiskVolume = DiskReport["volumes"][number];
export type DiskNetwork = DiskReport["networks"][number];
/** A container of no stack (a stack's containers are on its page). */
export type DiskContainer = DiskReport["containers"][number];
export type BuildCacheEntry = DiskReport["build_cache"][number];
/** What uses an object: a stack's service (its container, or none: declared), or a container of no stack. */
export type DiskUser = DiskImage["used_by"][number];
/** What a prune takes (images, containers, networks, build cache, volumes). */
export type PruneOptions = components["schemas"]["PruneOptions"];
/** Every object a prune with some options would remove, the bytes each frees, and what it never takes. */
export type PrunePreview = ResponseBody<"/api/disk/prune/preview", "post">;
export type PruneItem = PrunePreview["items"][number];
export type PruneKind = PruneItem["kind"];
/** What a prune removed and freed, and what it left, with why. */
export type PruneReport = ResponseBody<"/api/disk/prune", "post">;
