const PGP_BEGIN = /^-----BEGIN PGP PUBLIC KEY BLOCK-----/;
const PGP_END = /^-----END PGP PUBLIC KEY BLOCK-----/;

/**
 * The trusted keys typed in one text box, one entry each: an SSH public key per line
 * (`ssh-ed25519 AAAA… name`), or an OpenPGP public key block from its BEGIN line to its
 * END line (its lines kept together). Blank lines between entries are dropped.
 */
export function splitTrustedKeys(text: string): string[] {
  const keys: string[] = [];
  let block: string[] | null = null;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (block) {
      block.push(line);
      if (PGP_END.test(line)) {
        keys.push(block.join("\n"));
        block = null;
      }
    } else if (PGP_BEGIN.test(line)) {
      block = [line];
    } else if (line) {
      keys.push(line);
    }
  }
  if (block) keys.push(block.join("\n")); // unfinished: sent as typed, for the server to refuse
  return keys;
}

/** The keys as the text box shows them: SSH lines one under another, blocks apart by a blank line. */
export function joinTrustedKeys(keys: readonly string[]): string {
  return keys.map((key) => (key.includes("\n") ? `\n${key.trim()}\n` : key.trim())).join("\n").trim();
}
