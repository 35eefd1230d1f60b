// The journal signed as it is written (issue #32 item 1a). The hash chain (journal-chain.ts) can be recomputed by
// anyone; a signature by the lab key cannot. At every checkpoint (each fsync, each phase's end, the run's end) the
// writer appends a `journal-sig` line: the lab key's Ed25519 signature of the chain head, the hash of the line before
// it, which commits to every line up to there. run-start names the signer (`journalSigner`, its fingerprint), or says
// null when the run had no lab key. On reading, the signatures are checked against the lab's trusted key: a journal
// whose signatures are missing, do not verify, or stop before its end (and it did not just stop: no run-end) may still
// be graded for a look, but `report` does not sign a document from it and `db import` does not take it (the one line
// of journalTrustLine says why).
import { createPublicKey } from 'node:crypto';
import { fingerprint, signBytes, verifyBytes, type LabKey } from '../report/sign.js';
import type { JournalChain } from './journal-chain.js';
import type { JournalContents, JournalLine } from './journal.js';

export const JOURNAL_SIG = 'journal-sig';

// What one checkpoint signs: the chain head (hash of the line before the signature line).
export const sigPayload = (head: string): string => `cablequal journal-sig/1\n${head}`;

// The writer's half: the lab key's fingerprint and a signing function.
export interface JournalSigner {
  fingerprint: string;
  sign(data: string): string;
}

export function journalSignerOf(key: LabKey): JournalSigner {
  return { fingerprint: key.fingerprint, sign: (data) => signBytes(key, data) };
}

// What the journal's signatures prove, against the lab's trusted key.
export type JournalTrust =
  | { status: 'signed'; signer: string; signatures: number } // every line covered, each signature the lab key's
  | { status: 'partial'; signer: string; signatures: number; unsignedFrom: number } // signed up to a line, then the run just stopped (no run-end)
  | { status: 'old' } // written before journal signing (run-start names no signer, none expected)
  | { status: 'unsigned' } // written by a run without a lab key (run-start: journalSigner null)
  | { status: 'unverifiable'; signer: string } // signed, but no trusted lab key here to check it against
  | { status: 'invalid'; why: string }; // signatures missing, not the lab key's, not matching, or stopping early

// The journal's signatures checked against the trusted public key (PEM; null: none on this machine).
export function journalTrust(contents: JournalContents, chain: JournalChain, trustedPem: string | null): JournalTrust {
  const { lines } = contents;
  const start = lines.find((l) => l.type === 'run-start');
  const named = start?.['journalSigner'];
  const sigs = lines.map((l, i) => ({ l, i })).filter(({ l }) => l.type === JOURNAL_SIG);
  const lineNo = (i: number) => contents.lineNos?.[i] ?? i + 1;
  if (named === undefined && !sigs.length) return { status: 'old' };
  if (named === null && !sigs.length) return { status: 'unsigned' };
  const signer = (named as { fingerprint?: unknown } | null | undefined)?.fingerprint;
  if (typeof signer !== 'string')
    return { status: 'invalid', why: `${sigs.length} signature line(s) (first: line ${lineNo(sigs[0]!.i)}) in a journal whose run-start names no signer` };
  if (!sigs.length) return { status: 'invalid', why: `run-start names the signer ${signer}, but no line carries a signature: they were stripped` };
  if (chain.status !== 'intact') return { status: 'invalid', why: "the journal's hash chain is not intact, so its signatures cover nothing" };
  if (trustedPem === null) return { status: 'unverifiable', signer };
  const key = createPublicKey(trustedPem);
  const lab = fingerprint(key);
  if (lab !== signer) return { status: 'invalid', why: `signed by ${signer}, not by the lab key ${lab}` };
  for (const { l, i } of sigs) {
    const head = l['prev'];
    if (l['signer'] !== signer || typeof head !== 'string' || typeof l['sig'] !== 'string' || !verifyBytes(key, sigPayload(head), l['sig']))
      return { status: 'invalid', why: `the signature on line ${lineNo(i)} is not the lab key's signature of the lines before it` };
  }
  const last = sigs[sigs.length - 1]!.i;
  if (last === lines.length - 1) return { status: 'signed', signer, signatures: sigs.length };
  const after = lineNo(last + 1);
  if (lines.slice(last + 1).some((l: JournalLine) => l.type === 'run-end'))
    return {
      status: 'invalid',
      why: `lines ${after}-${lineNo(lines.length - 1)} after the last signature (line ${lineNo(last)}) are not signed, the run's end among them`,
    };
  return { status: 'partial', signer, signatures: sigs.length, unsignedFrom: after };
}

// One line for the operator: what the signatures prove, or null when there is nothing to say (signed to its end).
export function journalTrustLine(file: string, t: JournalTrust): string | null {
  switch (t.status) {
    case 'signed':
      return null;
    case 'partial':
      return `${file}: signed by the lab key up to line ${t.unsignedFrom - 1}; the lines after it (the run stopped before its next checkpoint) are not signed`;
    case 'old':
      return `${file}: written before journals were signed: only a certificate that pins its hash vouches for it`;
    case 'unsigned':
      return `${file}: written by a run without a lab key: unsigned, so nothing vouches for its lines`;
    case 'unverifiable':
      return `${file}: signed by ${t.signer}, but no lab public key is on this machine to check it ($CABLEQUAL_LAB_PUBLIC_KEY)`;
    case 'invalid':
      return `${file}: journal signatures do not hold (${t.why}): it can be graded for a look, never re-issued or imported as the run's result`;
  }
}
