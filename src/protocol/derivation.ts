// A protocol that is not a built-in one, against the built-in it derives from (issue #32 item 1b): a lab's copy
// renamed with relaxed limits must not read like the built-in on a certificate. The built-in compared with is the
// shipped protocol (protocols/<name>.json) whose settings differ from it in the fewest places; every setting that
// differs is named, "<path>: <built-in> -> <this>" (limits by rule, phases by name).
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { builtinStatus, RELEASED_PATH, releasedProtocols } from './released.js';

export interface ProtocolDerivation {
  from: string; // the built-in's name
  fromSha256: string; // the text compared with (the one this cablequal ships)
  changes: string[];
}

const SKIP = new Set(['$schema', 'name', 'description']);

// Every setting as "path" -> JSON value: limits keyed by rule, phases by name, other arrays whole.
function settings(v: unknown, path: string, out: Map<string, string>): Map<string, string> {
  if (
    Array.isArray(v) &&
    path !== '' &&
    v.every((x) => x && typeof x === 'object' && typeof (x as Record<string, unknown>)['rule' in x ? 'rule' : 'name'] === 'string')
  ) {
    for (const x of v as Record<string, unknown>[]) {
      const id = String(x['rule'] ?? x['name']);
      settings(Object.fromEntries(Object.entries(x).filter(([k]) => k !== 'rule' && k !== 'name')), `${path}.${id}`, out);
    }
  } else if (v && typeof v === 'object' && !Array.isArray(v)) {
    for (const [k, x] of Object.entries(v)) if (!(path === '' && SKIP.has(k))) settings(x, path ? `${path}.${k}` : k, out);
  } else out.set(path, JSON.stringify(v));
  return out;
}

function changesBetween(builtin: unknown, own: unknown): string[] {
  const a = settings(builtin, '', new Map());
  const b = settings(own, '', new Map());
  const keys = [...new Set([...a.keys(), ...b.keys()])].sort();
  return keys.filter((k) => a.get(k) !== b.get(k)).map((k) => `${k}: ${a.get(k) ?? '(none)'} -> ${b.get(k) ?? '(none)'}`);
}

// Null for a built-in protocol (a text cablequal shipped under its name) or a text that is not JSON.
export function protocolDerivation(text: string): ProtocolDerivation | null {
  let own: { name?: unknown };
  try {
    own = JSON.parse(text) as { name?: unknown };
  } catch {
    return null;
  }
  const sha = createHash('sha256').update(text, 'utf8').digest('hex');
  if (typeof own.name === 'string' && builtinStatus(own.name, sha) === 'builtin') return null;
  let best: ProtocolDerivation | null = null;
  for (const name of releasedProtocols().keys()) {
    let builtinText: string;
    try {
      builtinText = readFileSync(join(dirname(RELEASED_PATH), `${name}.json`), 'utf8');
    } catch {
      continue;
    }
    const changes = changesBetween(JSON.parse(builtinText), own);
    if (!best || changes.length < best.changes.length)
      best = { from: name, fromSha256: createHash('sha256').update(builtinText, 'utf8').digest('hex'), changes };
  }
  return best;
}
