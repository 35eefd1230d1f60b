// known_hosts checking like OpenSSH, so a swapped node (or a man in the middle) stops the run before any command.
// Plain and hashed (`|1|salt|hash`) host fields, `[host]:port` for ports other than 22, patterns with * ? and !.
// @revoked lines refuse their key. @cert-authority lines are skipped: cablequal does not verify host certificates,
// so a host known only through a CA is treated as unknown (the message says so).
import { createHmac, randomBytes } from 'node:crypto';
import { matchPatternList } from './ssh-config.js';

export interface KnownHostEntry {
  line: number;
  marker: 'revoked' | 'cert-authority' | null;
  hosts: string; // the raw host field
  keyType: string;
  keyBase64: string;
}

export type HostKeyVerdict =
  | { status: 'ok'; line: number }
  | { status: 'unknown'; certAuthorityLines: number[]; otherTypeLines: number[] }
  | { status: 'mismatch'; line: number; expectedType: string }
  | { status: 'revoked'; line: number };

// Pure parser; lines it cannot read are skipped, as OpenSSH does (reported in `skipped`).
export function parseKnownHosts(text: string): { entries: KnownHostEntry[]; skipped: number[] } {
  const entries: KnownHostEntry[] = [];
  const skipped: number[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const s = raw.trim();
    if (s === '' || s.startsWith('#')) return;
    const f = s.split(/\s+/);
    let marker: KnownHostEntry['marker'] = null;
    if (f[0] === '@revoked' || f[0] === '@cert-authority') marker = f.shift()!.slice(1) as KnownHostEntry['marker'];
    else if (f[0]?.startsWith('@')) return void skipped.push(i + 1);
    const [hosts, keyType, keyBase64] = f;
    if (!hosts || !keyType || !keyBase64 || !/^[A-Za-z0-9+/]+={0,2}$/.test(keyBase64)) return void skipped.push(i + 1);
    entries.push({ line: i + 1, marker, hosts, keyType, keyBase64 });
  });
  return { entries, skipped };
}

// The name OpenSSH looks up: `host` on port 22, `[host]:port` otherwise.
export function hostToken(host: string, port: number): string {
  return port === 22 ? host : `[${host}]:${port}`;
}

// Hashed host field for `token`, as `ssh-keygen -H` writes it.
export function hashHost(token: string, salt: Buffer = randomBytes(20)): string {
  const h = createHmac('sha1', salt).update(token).digest('base64');
  return `|1|${salt.toString('base64')}|${h}`;
}

// Does the entry's host field name this host?
export function entryMatches(entry: KnownHostEntry, host: string, port: number): boolean {
  const token = hostToken(host, port);
  if (entry.hosts.startsWith('|1|')) {
    const [, , salt, hash] = entry.hosts.split('|');
    if (!salt || !hash) return false;
    return createHmac('sha1', Buffer.from(salt, 'base64')).update(token).digest('base64') === hash;
  }
  return matchPatternList(entry.hosts.split(','), token);
}

// The key type named inside an SSH wire-format public key blob (`ssh-ed25519`, `ecdsa-sha2-nistp256`, ...).
export function keyTypeOf(blob: Buffer): string {
  if (blob.length < 4) return 'unknown';
  const n = blob.readUInt32BE(0);
  return blob.subarray(4, 4 + n).toString('latin1');
}

// Check a presented host key (wire blob) against known_hosts text.
export function checkHostKey(text: string, host: string, port: number, blob: Buffer): HostKeyVerdict {
  const { entries } = parseKnownHosts(text);
  const b64 = blob.toString('base64');
  const type = keyTypeOf(blob);
  const mine = entries.filter((e) => entryMatches(e, host, port));
  const revoked = entries.find((e) => e.marker === 'revoked' && e.keyBase64 === b64 && (e.hosts === '*' || mine.includes(e)));
  if (revoked) return { status: 'revoked', line: revoked.line };
  const plain = mine.filter((e) => e.marker === null);
  const same = plain.find((e) => e.keyBase64 === b64);
  if (same) return { status: 'ok', line: same.line };
  const sameType = plain.find((e) => e.keyType === type);
  if (sameType) return { status: 'mismatch', line: sameType.line, expectedType: sameType.keyType };
  return {
    status: 'unknown',
    certAuthorityLines: mine.filter((e) => e.marker === 'cert-authority').map((e) => e.line),
    otherTypeLines: plain.map((e) => e.line),
  };
}

// Key types already known for the host, to offer them first in negotiation (as OpenSSH orders HostKeyAlgorithms).
export function knownKeyTypes(text: string, host: string, port: number): string[] {
  const types = parseKnownHosts(text)
    .entries.filter((e) => e.marker === null && entryMatches(e, host, port))
    .map((e) => e.keyType);
  return [...new Set(types)];
}

// The line `StrictHostKeyChecking=accept-new` appends.
export function knownHostLine(host: string, port: number, blob: Buffer, hashed = false): string {
  const token = hostToken(host, port);
  return `${hashed ? hashHost(token) : token} ${keyTypeOf(blob)} ${blob.toString('base64')}`;
}

// OpenSSH's words for a changed key, with the line to look at and the command that clears it.
export function mismatchMessage(host: string, port: number, file: string, line: number, fingerprint: string): string {
  const token = hostToken(host, port);
  return [
    'REMOTE HOST IDENTIFICATION HAS CHANGED!',
    `The host key presented by ${token} (${fingerprint}) differs from the one in ${file}:${line}.`,
    'Someone could be eavesdropping, or the node was reinstalled/replaced.',
    `Check with the node's administrator, then remove the old key with: ssh-keygen -R '${token}' -f ${file}`,
  ].join(' ');
}
