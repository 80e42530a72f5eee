import { describe, expect, it } from "vitest";
import { portInfo, portInfos } from "./ports";

describe("published ports", () => {
  it.each([
    ["0.0.0.0:8080->80/tcp", "http://nas.local:8080"],
    ["[::]:8080->80/tcp", "http://nas.local:8080"],
    [":::9000->9000/tcp", "http://nas.local:9000"],
    ["0.0.0.0:443->443/tcp", "https://nas.local:443"],
    ["0.0.0.0:8443->8443/tcp", "https://nas.local:8443"],
    ["192.168.1.5:3000->3000/tcp", "http://nas.local:3000"],
  ])("%s opens %s", (text, url) => {
    expect(portInfo(text, "nas.local").url).toBe(url);
  });

  it.each(["80/tcp", "0.0.0.0:53->53/udp", "127.0.0.1:5432->5432/tcp", "[::1]:5432->5432/tcp"])(
    "%s has no link",
    (text) => {
      expect(portInfo(text, "nas.local").url).toBeNull();
    },
  );

  it("brackets an IPv6 host name", () => {
    expect(portInfo("0.0.0.0:80->80/tcp", "fd00::1").url).toBe("http://[fd00::1]:80");
  });

  it("shows a port bound on IPv4 and IPv6 once", () => {
    expect(portInfos(["0.0.0.0:8080->80/tcp", "[::]:8080->80/tcp", "81/tcp"], "h").map((p) => p.text)).toEqual([
      "0.0.0.0:8080->80/tcp",
      "81/tcp",
    ]);
  });
});
