// The built-in protocols' released versions (protocols/released.txt): the SHA-256 of every text cablequal has shipped
// under each built-in name. A journal that names a built-in protocol must embed one of them, so that "quick" or
// "spark-burnin" on a certificate means what cablequal shipped, not limits edited under the same name.
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const RELEASED_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'protocols', 'released.txt');

// Built-in protocol name -> SHA-256 of each version shipped, from the text of protocols/released.txt.
export function parseReleased(text: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const line of text.split('\n')) {
    const m = /^([a-z0-9][a-z0-9-]*) ([0-9a-f]{64})$/.exec(line.trim());
    if (!m) continue;
    out.set(m[1]!, [...(out.get(m[1]!) ?? []), m[2]!]);
  }
  return out;
}

let released: ReadonlyMap<string, readonly string[]> | null = null;

// Built-in protocol name -> SHA-256 of each version shipped (read once).
export function releasedProtocols(): ReadonlyMap<string, readonly string[]> {
  released ??= parseReleased(readFileSync(RELEASED_PATH, 'utf8'));
  return released;
}

// Whether a protocol name and text hash are a built-in's: 'builtin' (a released version), 'foreign' (a built-in's
// name on another text), or 'own' (not a built-in name).
export function builtinStatus(name: string, sha256: string): 'builtin' | 'foreign' | 'own' {
  const hashes = releasedProtocols().get(name);
  if (!hashes) return 'own';
  return hashes.includes(sha256) ? 'builtin' : 'foreign';
}
