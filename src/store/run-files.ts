// What the store reads from a run directory besides the record: the certificate (or run report) and its hash.
import { createHash } from 'node:crypto';
import { closeSync, existsSync, readSync } from 'node:fs';
import { openInput, readInputBytes } from '../io/read-input.js';
import { join } from 'node:path';
import type { RunPlace } from './run-row.js';

// certificate.json (setup-check.json for a set-up check, run-report.json for ERROR/ABORTED): the HTML to link, the
// SHA-256 of the signed JSON, its signer. A set-up check first: only a cablequal that tells them apart writes one, so
// beside a certificate.json an earlier version left it is the run's document now.
export function certificateOf(runDir: string): RunPlace['certificate'] {
  for (const base of ['setup-check', 'certificate', 'run-report']) {
    const json = join(runDir, `${base}.json`);
    if (!existsSync(json)) continue;
    let bytes: Buffer;
    try {
      bytes = readInputBytes(json, 'certificate');
    } catch {
      continue; // not a regular file (a FIFO, a device) or too large: not a document cablequal wrote
    }
    let signer: string | null = null;
    try {
      const doc = JSON.parse(bytes.toString('utf8')) as { body?: { signer?: { fingerprint?: unknown } | null } };
      const fp = doc.body?.signer?.fingerprint;
      signer = typeof fp === 'string' ? fp : null;
    } catch {
      // a damaged certificate still gets its hash; `cablequal verify` says what is wrong with it
    }
    const html = `${base}.html`;
    return { file: existsSync(join(runDir, html)) ? html : `${base}.json`, sha256: createHash('sha256').update(bytes).digest('hex'), signer };
  }
  return null;
}

// The protocol's regression tolerances from the journal's first line (run-start carries the protocol's text), for
// the golden cable's drift limits. Reads only the first line.
export function regressionOfJournal(journal: string): unknown {
  let fd: number | null = null;
  try {
    fd = openInput(journal, 'journal').fd; // a regular file only: a FIFO is never waited on
    const chunks: Buffer[] = [];
    const buf = Buffer.alloc(64 * 1024);
    for (let pos = 0; pos < 4 * 1024 * 1024;) {
      const n = readSync(fd, buf, 0, buf.length, pos);
      if (n <= 0) break;
      const nl = buf.subarray(0, n).indexOf(10);
      chunks.push(Buffer.from(buf.subarray(0, nl >= 0 ? nl : n)));
      if (nl >= 0) break;
      pos += n;
    }
    const first = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { type?: string; protocolText?: unknown };
    if (first.type !== 'run-start' || typeof first.protocolText !== 'string') return undefined;
    return (JSON.parse(first.protocolText) as { regression?: unknown }).regression;
  } catch {
    return undefined;
  } finally {
    if (fd !== null) closeSync(fd);
  }
}
