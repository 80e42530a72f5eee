import type { Channel, Delivery, NotificationCatalogue, NotificationRule } from "../api/types";

/** Part of the server's catalogue (`stackyard.notifications.catalogue` and `.channels`), as it answers. */
export const catalogue: NotificationCatalogue = {
  events: [
    { name: "stack_update", severity: "info", title: "Newer images are available", condition: true, announces_end: false },
    { name: "update_failed", severity: "critical", title: "Update failed", condition: false, announces_end: false },
    { name: "backup_succeeded", severity: "info", title: "Backup succeeded", condition: false, announces_end: false },
    { name: "backup_failed", severity: "critical", title: "Backup failed", condition: true, announces_end: false },
    { name: "schedule_missed", severity: "warning", title: "Scheduled backup missed", condition: false, announces_end: false },
    { name: "container_unhealthy", severity: "critical", title: "Container unhealthy", condition: true, announces_end: true },
    { name: "agent_offline", severity: "critical", title: "Agent offline", condition: true, announces_end: true },
    { name: "disk_full", severity: "warning", title: "Disk almost full", condition: true, announces_end: true },
    { name: "release_available", severity: "info", title: "New Stackyard release", condition: true, announces_end: false },
  ],
  channels: [
    {
      kind: "ntfy",
      label: "ntfy",
      fields: [
        { name: "server", label: "Server", type: "url", secret: false, required: true, choices: [], default: "https://ntfy.sh", help: "Its address, as in the browser (https://...)" },
        { name: "topic", label: "Topic", type: "text", secret: false, required: true, choices: [], default: null, help: null },
        { name: "token", label: "Access token", type: "text", secret: true, required: false, choices: [], default: null, help: null },
        { name: "priority", label: "Priority", type: "select", secret: false, required: false, choices: ["min", "low", "default", "high", "max"], default: "default", help: null },
      ],
    },
    {
      kind: "gotify",
      label: "Gotify",
      fields: [
        { name: "server", label: "Server", type: "url", secret: false, required: true, choices: [], default: null, help: "Its address, as in the browser (https://...)" },
        { name: "token", label: "Application token", type: "text", secret: true, required: true, choices: [], default: null, help: null },
      ],
    },
    {
      kind: "email",
      label: "Email (SMTP)",
      fields: [
        { name: "host", label: "SMTP server", type: "text", secret: false, required: true, choices: [], default: null, help: null },
        { name: "port", label: "Port", type: "number", secret: false, required: true, choices: [], default: "587", help: null },
        { name: "security", label: "Security", type: "select", secret: false, required: true, choices: ["starttls", "tls", "none"], default: "starttls", help: null },
        { name: "username", label: "User name", type: "text", secret: false, required: false, choices: [], default: null, help: null },
        { name: "password", label: "Password", type: "text", secret: true, required: false, choices: [], default: null, help: null },
        { name: "sender", label: "From", type: "email", secret: false, required: true, choices: [], default: null, help: null },
        { name: "recipients", label: "To", type: "emails", secret: false, required: true, choices: [], default: null, help: "One or more, separated by commas" },
      ],
    },
    {
      kind: "webhook",
      label: "Webhook",
      fields: [
        { name: "url", label: "URL", type: "url", secret: true, required: true, choices: [], default: null, help: null },
        {
          name: "signing_key",
          label: "Signing key",
          type: "text",
          secret: true,
          required: false,
          choices: [],
          default: null,
          help: "Signs each body: X-Stackyard-Signature: sha256=HMAC(key, timestamp + '.' + body)",
        },
      ],
    },
  ],
};

export function makeChannel(overrides: Partial<Channel> = {}): Channel {
  return {
    id: 1,
    name: "ops hook",
    kind: "webhook",
    settings: {},
    // A webhook's URL holds its token: a secret, never sent back.
    secrets_set: ["signing_key", "url"],
    enabled: true,
    created_at: "2026-11-20T10:00:00Z",
    updated_at: null,
    last_success_at: "2026-11-23T08:00:00Z",
    last_error_at: null,
    last_error: null,
    ...overrides,
  };
}

export const hook = makeChannel();
export const phone = makeChannel({
  id: 2,
  name: "phone",
  kind: "gotify",
  settings: { server: "https://gotify.lan" },
  secrets_set: ["token"],
  enabled: false,
  last_success_at: null,
  last_error_at: "2026-11-23T09:15:00Z",
  last_error: "Answered 401: unauthorized",
});

/** The rules of a first start (`DEFAULT_RULES`). */
export const failures: NotificationRule = {
  id: 1,
  name: "Failures and warnings",
  enabled: true,
  events: [],
  min_severity: "warning",
  hosts: [],
  stacks: [],
  channels: [],
};
export const images: NotificationRule = { ...failures, id: 2, name: "Image updates", events: ["stack_update"], min_severity: "info" };

export function makeDelivery(overrides: Partial<Delivery> = {}): Delivery {
  return {
    id: 1,
    event: "backup_failed",
    severity: "critical",
    ended: false,
    host: "yard",
    stack: "web",
    text: "Backup of web failed: disk full",
    at: "2026-11-23T02:00:00Z",
    status: "sent",
    attempts: 1,
    sent_at: "2026-11-23T02:00:05Z",
    error: null,
    message: null,
    ...overrides,
  };
}
