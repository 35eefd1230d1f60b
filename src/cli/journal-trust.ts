// What a run directory's journal signatures allow `report`, `grade` and `db import` to do with it (journal-signing.ts):
// - signed by the lab key (to its end, or to the last checkpoint of a run that just stopped): re-issued and imported;
// - unsigned because its run had no lab key: its documents stay unsigned (`report` re-renders them unsigned, never signs
//   them, even where a lab key is now: the key never saw its lines), imported like any unsigned run;
// - written before journals were signed (rules version 4 and earlier): `report` signs a re-issue only when a document
//   beside it is signed by this lab key and pins this journal's SHA-256 (the journal is then byte for byte what the
//   lab signed before); with no signed document it re-renders them unsigned; a signed one that pins other bytes (the
//   journal changed since) is refused, as is:
// - signatures missing, not the lab key's, not matching, or stopping before a run-end: graded for a look only.
import { join } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { canonicalJson } from '../report/canonical-json.js';
import { hashFile } from '../report/journal-hash.js';
import { verifyBytes, type LabKey } from '../report/sign.js';
import { readInputText } from '../io/read-input.js';
import { chainOfLines } from '../run/journal-chain.js';
import { journalTrust, journalTrustLine, type JournalTrust } from '../run/journal-signing.js';
import type { JournalContents } from '../run/journal.js';

export function trustOf(contents: JournalContents, trustedPem: string | null): JournalTrust {
  return journalTrust(contents, contents.chain ?? chainOfLines(contents.lines, contents.lineNos), trustedPem);
}

// What `grade` says of the signatures on stderr (nothing for a journal signed to its end, an old or a no-key one).
export function gradeTrustLine(journal: string, t: JournalTrust): string | null {
  if (t.status === 'signed' || t.status === 'old' || t.status === 'unsigned') return null;
  return `${t.status === 'invalid' ? 'warning' : 'note'}: ${journalTrustLine(journal, t)!}`;
}

const DOCUMENTS = ['certificate.json', 'setup-check.json', 'run-report.json'];

// A document beside the journal signed by this lab key that pins the journal's bytes, or null.
async function pinningDocument(runDir: string, key: LabKey): Promise<string | null> {
  const h = await hashFile(join(runDir, 'journal.jsonl'));
  if (!h) return null;
  for (const name of DOCUMENTS) {
    try {
      const doc = JSON.parse(readInputText(join(runDir, name), 'certificate')) as { body?: { journal?: { sha256?: unknown } }; signature?: unknown };
      if (typeof doc.signature !== 'string' || doc.body?.journal?.sha256 !== h.sha256) continue;
      if (verifyBytes(key.publicKey, canonicalJson(doc.body), doc.signature)) return name;
    } catch {
      // absent or unreadable: pins nothing
    }
  }
  return null;
}

// How `report` may sign the documents of this journal: with the lab key, unsigned (with why), or not at all (UsageError).
export async function reportSigning(
  runDir: string,
  contents: JournalContents,
  key: LabKey | null,
  signedDocument: string | null,
): Promise<{ labKey?: LabKey | null; unsignedReason?: string }> {
  const journal = join(runDir, 'journal.jsonl');
  const t = trustOf(contents, key?.publicKeyPem ?? null);
  const refuse = (why: string) => {
    throw new UsageError(`${journal}: ${why}: refusing to re-issue its documents (cablequal grade still grades it for a look)`);
  };
  switch (t.status) {
    case 'signed':
    case 'partial':
      return { labKey: key };
    case 'invalid':
      return refuse(`its journal signatures do not hold (${t.why})`);
    case 'unsigned':
      if (signedDocument) return refuse(`written by a run without a lab key, yet ${signedDocument} is signed`);
      return { labKey: null, unsignedReason: 'the journal was written by a run without a lab key: its documents stay unsigned' };
    case 'unverifiable':
      return {}; // no lab key here at all: written unsigned, said so (the caller's rule: never replace a signed document)
    case 'old':
      if (!key) return {}; // no lab key here: written unsigned, said so
      if (await pinningDocument(runDir, key)) return { labKey: key };
      if (signedDocument) return refuse(`written before journals were signed, and the signed ${signedDocument} does not pin its SHA-256 (it changed since)`);
      return { labKey: null, unsignedReason: 'the journal was written before journals were signed and no signed document pins it: re-issued unsigned' };
  }
}
