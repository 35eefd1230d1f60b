import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { compareRuns, keygen, regress, verifyCertificate, DEFAULT_LAB_KEY_PATH } from '../report/index.js';
import { loadProtocol } from '../protocol/index.js';
import { EXIT } from './exit-codes.js';
import { gradeRunDir } from './grade-command.js';
import type { CliIo } from './io.js';
import { writeReports } from './reports.js';
import { writeJsonAtomic } from '../io/atomic-write.js';
import { isStoreFile } from '../store/open-store.js';

// Run directories among the given paths: a run dir has a journal.jsonl; a directory without one is searched one level down.
export function expandRunDirs(paths: string[], cwd: string): string[] {
  const out: string[] = [];
  for (const p of paths) {
    const abs = resolve(cwd, p);
    if (isStoreFile(abs) && existsSync(abs)) continue; // `reports/*` also names the results store's file
    if (!existsSync(abs) || !statSync(abs).isDirectory()) throw new UsageError(`${p}: not a directory`);
    if (existsSync(join(abs, 'journal.jsonl')) || existsSync(join(abs, 'record.json'))) out.push(abs);
    else for (const d of readdirSync(abs)) if (existsSync(join(abs, d, 'record.json'))) out.push(join(abs, d));
  }
  return [...new Set(out)];
}

// `cablequal keygen [dir]`: the lab's Ed25519 signing key for certificates.
export async function keygenCommand(args: { dir?: string }, io: CliIo): Promise<number> {
  const dir = args.dir ? resolve(io.cwd, args.dir) : dirname(io.env.CABLEQUAL_LAB_KEY ?? DEFAULT_LAB_KEY_PATH);
  const k = await keygen(dir);
  io.stdout(`lab key: ${k.privateKeyPath} (keep it private)\npublic key: ${k.publicKeyPath}\nfingerprint: ${k.fingerprint}\n`);
  return EXIT.ok;
}

// `cablequal verify <certificate.json>`: signature, journal hash, and a re-grade of the journal.
export async function verifyCommand(args: { certificate: string; publicKey?: string }, io: CliIo): Promise<number> {
  const path = resolve(io.cwd, args.certificate);
  const { readFileSync } = await import('node:fs');
  const publicKeyPem = args.publicKey ? readFileSync(resolve(io.cwd, args.publicKey), 'utf8') : undefined;
  const res = await verifyCertificate(path, {
    regrade: async (runDir: string) => {
      const r = gradeRunDir(runDir);
      return { outcome: r.outcome, reasons: r.reasons };
    },
    ...(publicKeyPem ? { publicKeyPem } : {}),
  });
  for (const n of res.notes) io.stdout(`note: ${n}\n`);
  if (res.ok) {
    io.stdout(`OK: ${args.certificate}: signature, journal hash and re-graded verdict (${res.outcome}) agree; signer ${res.fingerprint}\n`);
    return EXIT.ok;
  }
  for (const p of res.problems) io.stderr(`problem: ${p}\n`);
  io.stderr(`NOT VERIFIED: ${args.certificate}\n`);
  return EXIT.fail;
}

// `cablequal report <run dir>`: re-render every output of a run (e.g. after `grade --protocol` with new limits).
export async function reportCommand(args: { runDir: string; protocol?: string }, io: CliIo): Promise<number> {
  const runDir = resolve(io.cwd, args.runDir);
  const record = gradeRunDir(runDir, args.protocol ? resolve(io.cwd, args.protocol) : undefined);
  writeJsonAtomic(join(runDir, 'record.json'), record);
  const paths = await writeReports(record, runDir, io);
  for (const p of paths) io.stdout(`${p}\n`);
  return paths.length ? EXIT.ok : EXIT.error;
}

// `cablequal compare <run dirs...> --out compare.csv`: one row per run, plus a per part-number summary.
export async function compareCommand(args: { runs: string[]; out: string }, io: CliIo): Promise<number> {
  const dirs = expandRunDirs(args.runs, io.cwd);
  if (dirs.length === 0) throw new UsageError('compare: no run directories found (give reports/<cable>/<run id> or reports/*/*)');
  const res = await compareRuns(dirs, resolve(io.cwd, args.out));
  for (const w of res.warnings) io.stderr(`warning: ${w}\n`);
  io.stdout(`${res.records.length} run(s) compared: ${res.paths.join(', ')}\n`);
  return EXIT.ok;
}

// `cablequal regress --baseline <run> <runs...>`: a reference cable's runs against its baseline, for lab CI.
export async function regressCommand(args: { baseline: string; runs: string[]; junit?: string; protocol?: string }, io: CliIo): Promise<number> {
  const tolerances = args.protocol ? loadProtocol(resolve(io.cwd, args.protocol)).regression : undefined;
  const res = await regress({
    baseline: resolve(io.cwd, args.baseline),
    runs: expandRunDirs(args.runs, io.cwd),
    ...(tolerances ? { tolerances } : {}),
    ...(args.junit ? { junitPath: resolve(io.cwd, args.junit) } : {}),
  });
  for (const w of res.warnings) io.stderr(`warning: ${w}\n`);
  io.stdout(res.text.endsWith('\n') ? res.text : `${res.text}\n`);
  return res.ok ? EXIT.ok : EXIT.fail;
}
