import { describe, expect, it } from "vitest";
import { joinTrustedKeys, splitTrustedKeys } from "./trustedKeys";

const BLOCK = "-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nmDMEZabc\n=AbCd\n-----END PGP PUBLIC KEY BLOCK-----";

describe("trusted keys", () => {
  it("are one per SSH line and one per OpenPGP block, blank lines dropped", () => {
    const text = `ssh-ed25519 AAAAC3one ada\n\n${BLOCK}\n  ssh-ed25519 AAAAC3two bob  \n`;
    expect(splitTrustedKeys(text)).toEqual(["ssh-ed25519 AAAAC3one ada", BLOCK, "ssh-ed25519 AAAAC3two bob"]);
  });

  it("come back as they went (the text box of an edit)", () => {
    const keys = ["ssh-ed25519 AAAAC3one ada", BLOCK, "ssh-ed25519 AAAAC3two bob"];
    expect(splitTrustedKeys(joinTrustedKeys(keys))).toEqual(keys);
    expect(joinTrustedKeys([])).toBe("");
  });

  it("send an unfinished block as typed, for the server to refuse", () => {
    expect(splitTrustedKeys("-----BEGIN PGP PUBLIC KEY BLOCK-----\nmDMEZ")).toEqual([
      "-----BEGIN PGP PUBLIC KEY BLOCK-----\nmDMEZ",
    ]);
  });
});
