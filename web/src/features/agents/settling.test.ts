import { describe, expect, it } from "vitest";
import { makeAgent, makeTunnelAgent } from "../../test/agentFixtures";
import { isSettling } from "./settling";

const NOW = Date.parse("2025-03-01T10:00:00Z");
const WINDOW = 15 * 60_000;

describe("an agent about to change", () => {
  it("is one that connects to us and is enabled, waiting for its host, its tunnel or its new key", () => {
    const fresh = { created_at: "2025-03-01T09:58:00Z" };
    expect(isSettling(makeTunnelAgent({ ...fresh, enrolled: false, tunnel: "never" }), NOW, WINDOW)).toBe(true);
    expect(isSettling(makeTunnelAgent({ ...fresh, tunnel: "never", tunnel_since: null }), NOW, WINDOW)).toBe(true);
    expect(isSettling(makeTunnelAgent({ tunnel: "reconnecting", tunnel_since: "2025-03-01T09:59:00Z" }), NOW, WINDOW)).toBe(
      true,
    );
    // A rotation always: its new key is used within seconds.
    expect(isSettling(makeTunnelAgent({ rotating: true }), NOW, WINDOW)).toBe(true);
  });

  it("is not one connected, disabled, direct, or down for longer than the window", () => {
    expect(isSettling(makeTunnelAgent(), NOW, WINDOW)).toBe(false);
    expect(isSettling(makeTunnelAgent({ enabled: false, tunnel: "never", created_at: "2025-03-01T09:58:00Z" }), NOW, WINDOW)).toBe(
      false,
    );
    expect(isSettling(makeAgent({ last_seen_at: null }), NOW, WINDOW)).toBe(false);
    // A token made an hour ago has long expired; an agent down for an hour comes back in its own time.
    expect(isSettling(makeTunnelAgent({ enrolled: false, tunnel: "never", tunnel_since: null, created_at: "2025-03-01T09:00:00Z" }), NOW, WINDOW)).toBe(
      false,
    );
    expect(isSettling(makeTunnelAgent({ tunnel: "reconnecting", tunnel_since: "2025-03-01T09:00:00Z" }), NOW, WINDOW)).toBe(
      false,
    );
    // Enrolled long ago, not seen since this Stackyard started an hour ago.
    expect(
      isSettling(makeTunnelAgent({ tunnel: "never", tunnel_since: null, updated_at: "2025-02-20T10:00:00Z" }), NOW, WINDOW),
    ).toBe(false);
  });
});
