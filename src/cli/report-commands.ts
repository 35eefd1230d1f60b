import { statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { printable } from '../domain/text.js';
import { verifyCertificate } from '../report/certificate-json.js';
import { DEFAULT_LAB_KEY_PATH, keygen, labKeyPath, readTrustedPublicKey, requireConfiguredLabKey, trustedLabPublicKey } from '../report/sign.js';
import { expandRunDirs as findRuns } from '../report/run-dirs.js';
import { checkOutputPath } from '../io/atomic-write.js';
import { ensureDir } from '../io/ensure-dir.js';
import { readInputText } from '../io/read-input.js';
import { EXIT } from './exit-codes.js';
import { gradeRunDir, journalWarnings, readRunJournal, writeRecord } from './grade-command.js';
import { journalTrustLine } from '../run/journal-signing.js';
import type { CliIo } from './io.js';
import { RULES_VERSION } from '../rules/versions.js';
import type { RunRecord } from '../domain/record.js';

// Run directories among the given paths (see report/run-dirs.ts); the results store's file is passed over. The
// commands of this file load what only one of them needs when it runs (`verify` never loads the store or the writers).
async function expandRunDirs(paths: string[], cwd: string): Promise<ReturnType<typeof findRuns>> {
  const { isStoreFile } = await import('../store/open-store.js');
  return findRuns(paths, cwd, { skip: isStoreFile });
}

// A directory is there (not: missing, a file, or under a file).
function isDirectory(p: string): boolean {
  try {
    return statSync(p).isDirectory();
  } catch {
    return false;
  }
}

// `cablequal keygen [dir]`: the lab's Ed25519 signing key for certificates.
export async function keygenCommand(args: { dir?: string }, io: CliIo): Promise<number> {
  const dir = ensureDir(args.dir ? resolve(io.cwd, args.dir) : dirname(io.env.CABLEQUAL_LAB_KEY ?? DEFAULT_LAB_KEY_PATH), 'key directory');
  const k = await keygen(dir);
  io.stdout(`lab key: ${k.privateKeyPath} (keep it private)\npublic key: ${k.publicKeyPath}\nfingerprint: ${k.fingerprint}\n`);
  // Where runs look for it: the default path, else $CABLEQUAL_LAB_KEY; verify pins the public key the same way.
  const found = labKeyPath(undefined, io.env) === k.privateKeyPath;
  io.stdout(
    found
      ? `runs sign with it: ${io.env.CABLEQUAL_LAB_KEY ? 'CABLEQUAL_LAB_KEY points to it' : 'it is where they look (CABLEQUAL_LAB_KEY points them at another key)'}; verify on this machine pins the public key beside it\n`
      : `runs sign with it once CABLEQUAL_LAB_KEY points to it: export CABLEQUAL_LAB_KEY=${k.privateKeyPath}\n`,
  );
  return EXIT.ok;
}

// `cablequal verify <certificate.json>`: the exact signed bytes, the signature against the lab's pinned key, the
// journal hash, and a re-grade of the journal. The key is pinned by --public-key, $CABLEQUAL_LAB_PUBLIC_KEY or the
// lab's own key files (in that order: report/sign.ts trustedLabPublicKey); with none, a consistent certificate is UNPINNED
// (exit 5), never OK: the key it carries proves nothing about who signed it.
export async function verifyCommand(args: { certificate: string; publicKey?: string }, io: CliIo): Promise<number> {
  // Given empty, it names no key: never a silent fall-back to $CABLEQUAL_LAB_PUBLIC_KEY or the lab key's public half.
  if (args.publicKey !== undefined && args.publicKey.trim() === '')
    throw new UsageError("--public-key: empty; give the lab's public key file (PEM), or leave --public-key out to use $CABLEQUAL_LAB_PUBLIC_KEY");
  const path = resolve(io.cwd, args.certificate);
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${args.certificate}: no such certificate file`);
  if (!st.isFile()) throw new UsageError(`${args.certificate}: not a file; give a certificate.json`);
  // A key file that is not an Ed25519 public key is bad usage (exit 2) naming it, never a fall-back to another key.
  const trusted =
    args.publicKey !== undefined ? readTrustedPublicKey(resolve(io.cwd, args.publicKey), `--public-key ${args.publicKey}`) : await trustedLabPublicKey(io.env);
  const res = await verifyCertificate(path, {
    regrade: async (runDir: string, rulesVersion: number) => {
      // A journal that says it was signed must hold the pinned lab key's signatures (an old or unsigned one has none).
      const contents = readRunJournal(runDir);
      const { trustOf } = await import('./journal-trust.js');
      const trust = trustOf(contents, trusted?.pem ?? null);
      if (trust.status === 'invalid') throw new Error(journalTrustLine(join(runDir, 'journal.jsonl'), trust)!);
      const r = gradeRunDir(runDir, undefined, rulesVersion, contents);
      for (const w of journalWarnings(r, runDir)) io.stderr(`${w}\n`);
      return {
        outcome: r.outcome,
        reasons: r.reasons,
        serial: r.cable.serial,
        simulated: r.simulated,
        ...(r.kind ? { kind: r.kind, shortOfQualification: r.shortOfQualification ?? [] } : {}),
      };
    },
    currentRulesVersion: RULES_VERSION,
    ...(trusted ? { publicKeyPem: trusted.pem, publicKeySource: trusted.source } : {}),
  });
  for (const n of res.notes) io.stdout(`note: ${printable(n)}\n`);
  // What the signed body says it is, first: a set-up check verifies as one, never as a qualification.
  const what =
    res.kind === 'setup-check' ? 'SET-UP CHECK (not a qualification)' : res.kind === 'run-report' ? 'run report (no verdict)' : 'qualification certificate';
  if (res.ok && res.pinned) {
    io.stdout(
      `OK: ${args.certificate}: ${what}: signature (pinned: ${printable(trusted!.source)}), journal hash and re-graded verdict (${res.outcome}, rules version ${res.rulesVersion}) agree; signer ${res.fingerprint}\n`,
    );
    return EXIT.ok;
  }
  if (res.ok) {
    io.stdout(
      `UNPINNED: ${args.certificate}: ${what}: consistent (signature by the key the certificate carries, journal hash, re-graded verdict ${res.outcome}), but the signer ${res.fingerprint} is not pinned: give the lab's public key with --public-key or $CABLEQUAL_LAB_PUBLIC_KEY\n`,
    );
    return EXIT.unpinned;
  }
  for (const p of res.problems) io.stderr(`problem: ${printable(p)}\n`);
  io.stderr(`NOT VERIFIED: ${args.certificate}\n`);
  return EXIT.fail;
}

// `cablequal report <run dir>`: re-render every output of a run (e.g. after `grade --protocol` with new limits). A lab
// key that was asked for ($CABLEQUAL_LAB_KEY) but cannot be read, or none at all where a signed certificate is, is
// refused before anything is rewritten: a signed certificate is never replaced by an unsigned one.
export async function reportCommand(args: { runDir: string; protocol?: string }, io: CliIo): Promise<number> {
  const runDir = resolve(io.cwd, args.runDir);
  const { key, path: keyPath } = await requireConfiguredLabKey(undefined, io.env);
  if (!key) {
    const signed = signedDocumentIn(runDir);
    if (signed)
      throw new UsageError(
        `${signed}: signed by the lab key, and no lab key is at ${keyPath}: refusing to replace it with an unsigned one (point CABLEQUAL_LAB_KEY at the lab key)`,
      );
  }
  // Signed only when the journal's own signatures are the lab key's (or, written before journals were signed, when a
  // signed document pins it): src/cli/journal-trust.ts.
  const contents = readRunJournal(runDir);
  const { reportSigning } = await import('./journal-trust.js');
  const signing = await reportSigning(runDir, contents, key, signedDocumentIn(runDir));
  if (signing.unsignedReason) io.stderr(`note: ${printable(signing.unsignedReason)}\n`);
  const record = gradeRunDir(runDir, args.protocol ? resolve(io.cwd, args.protocol) : undefined, undefined, contents);
  for (const w of journalWarnings(record, runDir)) io.stderr(`${w}\n`);
  writeRecord(runDir, record);
  const { writeReports } = await import('./reports.js');
  const paths = await writeReports(record, runDir, io, signing, contents);
  for (const p of paths) io.stdout(`${p}\n`);
  return paths.length ? EXIT.ok : EXIT.error;
}

// The run directory's certificate.json, setup-check.json or run-report.json when it carries a signature.
function signedDocumentIn(runDir: string): string | null {
  for (const name of ['certificate.json', 'setup-check.json', 'run-report.json']) {
    try {
      const doc = JSON.parse(readInputText(join(runDir, name), 'certificate')) as { signature?: unknown };
      if (typeof doc?.signature === 'string' && doc.signature) return join(runDir, name);
    } catch {
      // absent or unreadable: nothing signed to protect
    }
  }
  return null;
}

// `cablequal compare <run dirs...> --out compare.csv`: one row per run, plus a per part-number summary. Takes run
// directories, reports directories (searched below) and quoted globs ('reports/*/*').
export async function compareCommand(args: { runs: string[]; out: string }, io: CliIo): Promise<number> {
  const { dirs, warnings } = await expandRunDirs(args.runs, io.cwd);
  for (const w of warnings) io.stderr(`warning: ${printable(w)}\n`);
  if (dirs.length === 0) throw new UsageError("compare: no run directories found (give reports, reports/<cable>/<run id> or 'reports/*/*')");
  const out = resolve(io.cwd, args.out);
  if (isDirectory(out)) throw new UsageError(`--out ${args.out}: is a directory; give the CSV file to write, e.g. ${args.out.replace(/\/+$/, '')}/compare.csv`);
  ensureDir(dirname(out), '--out');
  const { byPartPath, compareRuns } = await import('../report/compare.js');
  checkOutputPath(out, `--out ${args.out}`);
  checkOutputPath(byPartPath(out), `--out ${args.out}: ${byPartPath(out)}`);
  // Each run's result as the store takes it: re-graded from its journal, a record.json that disagrees named.
  const { recordOfRunDir } = await import('../store/import.js');
  const pem = (await trustedLabPublicKey(io.env))?.pem ?? null;
  const res = await compareRuns(dirs, out, async (dir) => {
    const r = recordOfRunDir(dir, pem);
    for (const w of r.warnings) io.stderr(`warning: ${printable(w)}\n`);
    return r.record as RunRecord;
  });
  for (const w of res.warnings) io.stderr(`warning: ${printable(w)}\n`);
  io.stdout(`${res.records.length} run(s) compared: ${res.paths.join(', ')}\n`);
  return EXIT.ok;
}

// `cablequal regress --baseline <run> <runs...>`: a reference cable's runs against its baseline, for lab CI.
export async function regressCommand(args: { baseline: string; runs: string[]; junit?: string; protocol?: string }, io: CliIo): Promise<number> {
  const { loadProtocol } = await import('../protocol/index.js');
  const { regress } = await import('../report/regress.js');
  const tolerances = args.protocol ? loadProtocol(resolve(io.cwd, args.protocol)).regression : undefined;
  const { dirs, warnings } = await expandRunDirs(args.runs, io.cwd);
  for (const w of warnings) io.stderr(`warning: ${printable(w)}\n`);
  const baseline = resolve(io.cwd, args.baseline);
  if (args.junit) {
    ensureDir(dirname(resolve(io.cwd, args.junit)), '--junit');
    checkOutputPath(resolve(io.cwd, args.junit), `--junit ${args.junit}`);
  }
  const res = await regress({
    baseline,
    runs: dirs.filter((d) => d !== baseline),
    ...(tolerances ? { tolerances } : {}),
    ...(args.junit ? { junitPath: resolve(io.cwd, args.junit) } : {}),
  });
  for (const w of res.warnings) io.stderr(`warning: ${printable(w)}\n`);
  io.stdout(`${res.text.trimEnd().split('\n').map(printable).join('\n')}\n`);
  // 0 within tolerance, 1 a regression, 3 nothing to compare (an incomplete run on either side).
  if (res.incomplete.length) return EXIT.error;
  return res.ok ? EXIT.ok : EXIT.fail;
}
