import { statSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { nestingExceeds, nonFiniteNumberAt } from '../domain/json-depth.js';
import type { Outcome, Reason } from '../domain/outcome.js';
import type { RunRecord } from '../domain/record.js';
import { printable } from '../domain/text.js';
import { problemOf } from '../io/json-schema.js';
import { readInputText } from '../io/read-input.js';
import { writeFileAtomic } from '../io/atomic-write.js';
import { certificateProblem } from './certificate-schema.js';
import { canonicalJson } from './canonical-json.js';
import { certificateContent, documentKind, type CertificateContent, type DocumentKind, type ProtocolDerived } from './certificate-content.js';
import { hashFile, journalPath } from './journal-hash.js';
import { fingerprint, signBytes, verifyBytes, type LabKey } from './sign.js';

// What the signature covers: the content plus the journal hash and the signer's identity.
export interface SignedBody extends CertificateContent {
  journal: { file: string; sha256: string | null; bytes: number | null };
  signer: { algorithm: 'Ed25519'; fingerprint: string; publicKeyPem: string } | null;
}

// certificate.json on disk: `signature` is base64 Ed25519 over canonicalJson(body); null when unsigned.
export interface CertificateDocument {
  body: SignedBody;
  signature: string | null;
  unsignedReason?: string;
}

export interface JsonWriterExtras {
  labKey?: LabKey | null; // null/absent: written unsigned with `unsignedReason`
  unsignedReason?: string;
  protocolDerived?: ProtocolDerived | null; // the protocol that ran is not a built-in (certificate-content.ts)
}

// Replace non-finite numbers (JSON cannot carry them) by null so canonical JSON never throws on a record.
export function jsonSafe<T>(value: T): T {
  return JSON.parse(
    JSON.stringify(value, (_k, v: unknown) => (typeof v === 'number' && !Number.isFinite(v) ? null : typeof v === 'bigint' ? v.toString() : v)),
  ) as T;
}

// Build the (optionally signed) document; the caller supplies the journal hash so this stays pure.
export function buildCertificateDocument(
  record: RunRecord,
  journal: SignedBody['journal'],
  labKey: LabKey | null,
  unsignedReason = 'no lab key found',
  protocolDerived?: ProtocolDerived | null,
): CertificateDocument {
  const body: SignedBody = jsonSafe({
    ...certificateContent(record, protocolDerived),
    journal,
    signer: labKey ? { algorithm: 'Ed25519' as const, fingerprint: labKey.fingerprint, publicKeyPem: labKey.publicKeyPem } : null,
  });
  if (!labKey) return { body, signature: null, unsignedReason };
  return { body, signature: signBytes(labKey, canonicalJson(body)) };
}

// Hashes the run dir's journal and builds the document (writeCertificateDocument writes it).
export async function certificateDocumentFor(record: RunRecord, dir: string, extras: JsonWriterExtras = {}): Promise<CertificateDocument> {
  const file = basename(record.journal.file || 'journal.jsonl');
  const h = await hashFile(journalPath(dir, file));
  return buildCertificateDocument(
    record,
    { file, sha256: h?.sha256 ?? null, bytes: h?.bytes ?? null },
    extras.labKey ?? null,
    extras.unsignedReason,
    extras.protocolDerived,
  );
}

// Writes an already built document next to the record.
export async function writeCertificateDocument(doc: CertificateDocument, dir: string): Promise<string> {
  return writeFileAtomic(join(dir, `${doc.body.kind}.json`), canonicalJson(doc) + '\n');
}

// The re-grader: reads the run dir's journal again and returns the verdict the given rules version reaches, and what
// the protocol that ran may claim (src/rules/qualification.ts).
export type Regrade = (
  runDir: string,
  rulesVersion: number,
) => Promise<{ outcome: Outcome; reasons: Reason[]; serial?: string | null } & Partial<Pick<RunRecord, 'kind' | 'shortOfQualification' | 'simulated'>>>;

export interface VerifyOptions {
  regrade: Regrade;
  // Today's rules version: a certificate signed under an older one is re-graded with its own rules (it must agree),
  // then with today's, and a different verdict today is reported as a note, not a problem.
  currentRulesVersion: number;
  // Trusted lab public key (PEM). Without it the embedded key is used, and the result says the signer is not pinned.
  publicKeyPem?: string;
  // Where the trusted key came from, for the messages ("--public-key lab.pub.pem").
  publicKeySource?: string;
}

export interface VerifyResult {
  rulesVersion?: number; // the rules the certificate was re-graded with (the ones it names)
  kind: DocumentKind | null; // what the signed body says it is: a qualification certificate, a set-up check, a run report
  ok: boolean;
  problems: string[];
  notes: string[];
  outcome: Outcome | null;
  fingerprint: string | null;
  // The signature was checked against a trusted lab key (false: only against the key the certificate carries).
  pinned: boolean;
}

const TOP_KEYS = ['body', 'signature', 'unsignedReason'];
// A certificate nests 7 levels; far deeper is not one cablequal wrote.
const MAX_DEPTH = 64;

// A field beside body and signature is covered by no signature, even when the file is in canonical form; so is an
// unsignedReason beside a signature (only an unsigned document says why it is unsigned).
function extraFieldsProblem(doc: Record<string, unknown>): string | null {
  const allowed = doc['signature'] === null ? TOP_KEYS : TOP_KEYS.filter((k) => k !== 'unsignedReason');
  const extra = Object.keys(doc).filter((k) => !allowed.includes(k));
  return extra.length
    ? `fields outside the signed body (${extra.map((k) => JSON.stringify(k)).join(', ')}): not covered by the signature; only the canonical form that was signed is accepted`
    : null;
}

// The signature covers canonicalJson(body), and the file is written as canonicalJson(document) plus a newline: any
// other bytes (a field outside the body, a duplicate key, keys reordered, whitespace) are not what was signed.
export function canonicalFormProblem(text: string, doc: Record<string, unknown>): string | null {
  const extra = extraFieldsProblem(doc);
  if (extra) return extra;
  const want = `${canonicalJson(doc)}\n`;
  if (text === want) return null;
  let at = 0;
  while (at < text.length && text[at] === want[at]) at++;
  const near = JSON.stringify(text.slice(Math.max(0, at - 20), at + 20));
  return `not the canonical form that was signed (first difference at character ${at + 1}, near ${near}): whitespace, key order or a duplicate key was changed, or the file was re-saved; only the exact canonical bytes are accepted`;
}

function reasonKey(r: Reason): string {
  return [r.rule, r.node ?? '', r.phase ?? '', r.lane ?? '', r.rail ?? ''].join('|');
}

// Checks signature, journal hash and verdict; every mismatch becomes one readable problem line (never throws on bad files).
export async function verifyCertificate(certPath: string, opts: VerifyOptions): Promise<VerifyResult> {
  const problems: string[] = [];
  const notes: string[] = [];
  const refused = (problem: string): VerifyResult => ({ ok: false, problems: [problem], notes, outcome: null, fingerprint: null, pinned: false, kind: null });
  let doc: CertificateDocument;
  let text: string;
  try {
    text = readInputText(certPath, 'certificate');
    doc = JSON.parse(text) as CertificateDocument;
  } catch (err) {
    return refused(err instanceof UsageError ? err.message : `${certPath}: cannot read certificate (${(err as Error).message})`);
  }
  // Before anything walks it: a body nested 200,000 deep parses, but every recursive reader overflows on it.
  if (nestingExceeds(doc, MAX_DEPTH)) return refused(`${certPath}: nested deeper than ${MAX_DEPTH} levels: not a certificate cablequal wrote`);
  // `1e999` parses as Infinity, which no signed document can hold (canonical JSON has no spelling for it).
  const infinite = nonFiniteNumberAt(doc);
  if (infinite) return refused(`${certPath}: ${printable(infinite.slice(0, 120))}: a number that is not finite: not a certificate cablequal wrote`);
  const body = doc?.body;
  if (!body || typeof body !== 'object' || body.schema !== 'cablequal.certificate/1') {
    return refused(`${certPath}: not a cablequal certificate (schema cablequal.certificate/1)`);
  }
  const extra = extraFieldsProblem(doc as unknown as Record<string, unknown>);
  if (extra) return refused(`${certPath}: ${extra}`);
  // Every field read below has its type, the document only its documented keys, the signature its one spelling.
  const shape = certificateProblem(doc);
  if (shape) return refused(`${certPath}: ${problemOf('certificate', shape)}: only what cablequal signs is accepted`);
  const runDir = dirname(certPath);

  // 0. The exact bytes that were signed, nothing else.
  const form = canonicalFormProblem(text, doc as unknown as Record<string, unknown>);
  if (form) problems.push(form);

  // 1. Signature.
  const signerFp = body.signer?.fingerprint ?? null;
  if (!doc.signature || !body.signer) {
    problems.push(`certificate is unsigned${doc.unsignedReason ? ` (${doc.unsignedReason})` : ''}`);
  } else {
    let embeddedFp: string | null = null;
    try {
      embeddedFp = fingerprint(body.signer.publicKeyPem);
    } catch {
      problems.push('embedded signer public key is not a valid Ed25519 PEM key');
    }
    if (embeddedFp && embeddedFp !== body.signer.fingerprint)
      problems.push(`signer fingerprint ${body.signer.fingerprint} does not match the embedded key (${embeddedFp})`);
    let key = body.signer.publicKeyPem;
    if (opts.publicKeyPem) {
      let trustedFp: string | null = null;
      try {
        trustedFp = fingerprint(opts.publicKeyPem);
      } catch {
        problems.push('trusted public key is not a valid Ed25519 PEM key');
      }
      if (trustedFp && trustedFp !== body.signer.fingerprint)
        problems.push(
          `signed by key ${body.signer.fingerprint}, not by the trusted lab key ${trustedFp}${opts.publicKeySource ? ` (${opts.publicKeySource})` : ''}`,
        );
      key = opts.publicKeyPem;
    } else {
      notes.push(
        `signer not pinned: the signature was checked only against the key inside the certificate (${body.signer.fingerprint}), which anyone can replace with their own; compare it with the lab's published fingerprint, or pin the lab's key (--public-key, $CABLEQUAL_LAB_PUBLIC_KEY)`,
      );
    }
    if (!verifyBytes(key, canonicalJson(body), doc.signature))
      problems.push('signature does not match the certificate content (edited, or signed by another key)');
  }

  // 2. Journal.
  const jp = journalPath(runDir, body.journal.file);
  // A regular file only: a FIFO or a device named as the journal would be read for ever.
  const st = statSync(jp, { throwIfNoEntry: false });
  const h =
    st && !st.isFile()
      ? (problems.push(`${jp}: not a regular file, cannot be the journal`), null)
      : await hashFile(jp).catch((err: Error) => {
          problems.push(`${jp}: cannot read journal (${err.message})`);
          return null;
        });
  if (!body.journal?.sha256) problems.push('certificate records no journal hash');
  else if (!h) problems.push(`${jp}: journal missing`);
  else if (h.sha256 !== body.journal.sha256) problems.push(`journal ${basename(jp)} SHA-256 ${h.sha256} differs from the certified ${body.journal.sha256}`);

  // 3. Verdict, with the rules the certificate was signed under (certificates of rules version 1 do not say).
  const version = typeof body.rulesVersion === 'number' ? body.rulesVersion : 1;
  try {
    const again = await opts.regrade(runDir, version);
    if (again.outcome !== body.outcome) problems.push(`re-grading gives ${again.outcome}, certificate says ${body.outcome}`);
    // What the cable is and whether the run was simulated are the journal's too: a body signed by any key (an UNPINNED
    // verify trusts only consistency) must say what its journal says (#32 item 6).
    if (again.serial !== undefined && again.serial !== (body.cable?.serial ?? null))
      problems.push(`the journal's cable serial is ${JSON.stringify(again.serial)}, the certificate says ${JSON.stringify(body.cable?.serial ?? null)}`);
    if (again.simulated !== undefined && again.simulated !== body.simulated)
      problems.push(`the journal says the run was ${again.simulated ? '' : 'not '}simulated, the certificate says simulated: ${String(body.simulated)}`);
    const want = (body.reasons ?? []).map(reasonKey).sort().join('\n');
    const got = again.reasons.map(reasonKey).sort().join('\n');
    if (want !== got)
      problems.push(
        `re-grading gives reasons [${again.reasons.map((r) => r.rule).join(', ')}], certificate lists [${(body.reasons ?? []).map((r) => r.rule).join(', ')}]`,
      );
    const claim = claimProblem(body, again);
    if (claim) (claim.note ? notes : problems).push(claim.text);
  } catch (err) {
    problems.push(`re-grading failed: ${(err as Error).message}`);
  }
  if (version !== opts.currentRulesVersion) {
    try {
      const today = await opts.regrade(runDir, opts.currentRulesVersion);
      notes.push(
        today.outcome === body.outcome
          ? `signed under rules version ${version}; today's rules (version ${opts.currentRulesVersion}) reach the same verdict (${today.outcome})`
          : `signed under rules version ${version}; today's rules (version ${opts.currentRulesVersion}) would grade this run ${today.outcome}, not ${body.outcome}: the certificate stands for the rules it was signed under`,
      );
    } catch (err) {
      notes.push(`today's rules (version ${opts.currentRulesVersion}) could not re-grade it: ${(err as Error).message}`);
    }
  }

  return {
    ok: problems.length === 0,
    problems,
    notes,
    outcome: body.outcome ?? null,
    fingerprint: signerFp,
    rulesVersion: version,
    pinned: opts.publicKeyPem !== undefined,
    kind: body.kind ?? null,
  };
}

// Whether the document claims what the journal's protocol allows. A body that lists shortOfQualification was written
// since set-up checks were told apart: its kind must be the one its journal makes (else a problem). An older
// certificate of a protocol short of a qualification stands as issued, with a note saying what it would be today.
function claimProblem(body: SignedBody, again: Awaited<ReturnType<Regrade>>): { text: string; note?: true } | null {
  if (!again.kind) return null;
  const want = documentKind({ outcome: again.outcome, kind: again.kind });
  const short = (again.shortOfQualification ?? []).join('; ');
  if (Array.isArray(body.shortOfQualification)) {
    return body.kind === want
      ? null
      : { text: `the document is a ${body.kind}, but its journal's protocol (${body.protocol?.name}) makes it a ${want}${short ? ` (${short})` : ''}` };
  }
  if (body.kind === 'certificate' && want === 'setup-check')
    return {
      text: `issued as a qualification certificate before set-up checks were told apart: its protocol (${body.protocol?.name}) runs short of a qualification (${short}); written today it would be a set-up check`,
      note: true,
    };
  return null;
}
