import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { printable } from '../domain/text.js';
import { compareRuns, keygen, regress, verifyCertificate, DEFAULT_LAB_KEY_PATH } from '../report/index.js';
import { expandRunDirs as findRuns } from '../report/run-dirs.js';
import { isStoreFile } from '../store/open-store.js';
import { loadProtocol } from '../protocol/index.js';
import { ensureDir } from '../io/ensure-dir.js';
import { EXIT } from './exit-codes.js';
import { gradeRunDir, journalWarnings, writeRecord } from './grade-command.js';
import type { CliIo } from './io.js';
import { writeReports } from './reports.js';
import { RULES_VERSION } from '../rules/registry.js';

// Run directories among the given paths (see report/run-dirs.ts); the results store's file is passed over.
export const expandRunDirs = (paths: string[], cwd: string) => findRuns(paths, cwd, { skip: isStoreFile });

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
  return EXIT.ok;
}

// `cablequal verify <certificate.json>`: signature, journal hash, and a re-grade of the journal.
export async function verifyCommand(args: { certificate: string; publicKey?: string }, io: CliIo): Promise<number> {
  const path = resolve(io.cwd, args.certificate);
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) throw new UsageError(`${args.certificate}: no such certificate file`);
  if (!st.isFile()) throw new UsageError(`${args.certificate}: not a file; give a certificate.json`);
  let publicKeyPem: string | undefined;
  if (args.publicKey) {
    try {
      publicKeyPem = readFileSync(resolve(io.cwd, args.publicKey), 'utf8');
    } catch (e) {
      throw new UsageError(`--public-key ${args.publicKey}: cannot read the lab's public key (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  const res = await verifyCertificate(path, {
    regrade: async (runDir: string, rulesVersion: number) => {
      const r = gradeRunDir(runDir, undefined, rulesVersion);
      for (const w of journalWarnings(r, runDir)) io.stderr(`${w}\n`);
      return { outcome: r.outcome, reasons: r.reasons };
    },
    currentRulesVersion: RULES_VERSION,
    ...(publicKeyPem ? { publicKeyPem } : {}),
  });
  for (const n of res.notes) io.stdout(`note: ${printable(n)}\n`);
  if (res.ok) {
    io.stdout(`OK: ${args.certificate}: signature, journal hash and re-graded verdict (${res.outcome}, rules version ${res.rulesVersion}) agree; signer ${res.fingerprint}\n`);
    return EXIT.ok;
  }
  for (const p of res.problems) io.stderr(`problem: ${printable(p)}\n`);
  io.stderr(`NOT VERIFIED: ${args.certificate}\n`);
  return EXIT.fail;
}

// `cablequal report <run dir>`: re-render every output of a run (e.g. after `grade --protocol` with new limits).
export async function reportCommand(args: { runDir: string; protocol?: string }, io: CliIo): Promise<number> {
  const runDir = resolve(io.cwd, args.runDir);
  const record = gradeRunDir(runDir, args.protocol ? resolve(io.cwd, args.protocol) : undefined);
  for (const w of journalWarnings(record, runDir)) io.stderr(`${w}\n`);
  writeRecord(runDir, record);
  const paths = await writeReports(record, runDir, io);
  for (const p of paths) io.stdout(`${p}\n`);
  return paths.length ? EXIT.ok : EXIT.error;
}

// `cablequal compare <run dirs...> --out compare.csv`: one row per run, plus a per part-number summary. Takes run
// directories, reports directories (searched below) and quoted globs ('reports/*/*').
export async function compareCommand(args: { runs: string[]; out: string }, io: CliIo): Promise<number> {
  const { dirs, warnings } = expandRunDirs(args.runs, io.cwd);
  for (const w of warnings) io.stderr(`warning: ${printable(w)}\n`);
  if (dirs.length === 0) throw new UsageError('compare: no run directories found (give reports, reports/<cable>/<run id> or \'reports/*/*\')');
  const out = resolve(io.cwd, args.out);
  if (isDirectory(out)) throw new UsageError(`--out ${args.out}: is a directory; give the CSV file to write, e.g. ${args.out.replace(/\/+$/, '')}/compare.csv`);
  ensureDir(dirname(out), '--out');
  const res = await compareRuns(dirs, out);
  for (const w of res.warnings) io.stderr(`warning: ${printable(w)}\n`);
  io.stdout(`${res.records.length} run(s) compared: ${res.paths.join(', ')}\n`);
  return EXIT.ok;
}

// `cablequal regress --baseline <run> <runs...>`: a reference cable's runs against its baseline, for lab CI.
export async function regressCommand(args: { baseline: string; runs: string[]; junit?: string; protocol?: string }, io: CliIo): Promise<number> {
  const tolerances = args.protocol ? loadProtocol(resolve(io.cwd, args.protocol)).regression : undefined;
  const { dirs, warnings } = expandRunDirs(args.runs, io.cwd);
  for (const w of warnings) io.stderr(`warning: ${printable(w)}\n`);
  const baseline = resolve(io.cwd, args.baseline);
  if (args.junit) ensureDir(dirname(resolve(io.cwd, args.junit)), '--junit');
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
