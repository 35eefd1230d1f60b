// Which cablequal wrote a document, and the journal format it writes. Every document the tool writes (the journal's
// run-start, record.json, certificate.json and its set-up check and run report, batch-state.json) records
// CABLEQUAL_VERSION; `cablequal --version` prints both with the rules version. package.json's `version` is the one
// source: test/cli/version.test.ts fails when the two differ, so a release bumps both.
export const CABLEQUAL_VERSION = '0.1.0';

// The journal format (journal.jsonl's lines), numbered by what a reader must know of them:
//   1: cablequal 0.1.0's journals, graded as rules version 1 (test/fixtures/journals-v1);
//   2: run-start names the rules version the run was watched with (`rulesVersion`, test/fixtures/journals-v2);
//   3: every line carries the SHA-256 of the line before it (`prev`; run-start says `chain: "sha256-prev"`);
//   4: run-start names the lab key that signs the journal as it is written (`journalSigner`, null without a key), and
//      `journal-sig` lines sign the chain head at each checkpoint (src/run/journal-signing.ts, docs/journal-integrity.md).
// A journal's format is told by those fields; run-start states it as `journalFormat` from version 3 on.
export const JOURNAL_FORMAT_VERSION = 4;
