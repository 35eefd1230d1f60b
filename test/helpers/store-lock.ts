// A real-time run against `sim serve` while another process holds the results store (`BEGIN EXCLUSIVE`, as a backup
// tool, a long dashboard query or a second controller would): how sampling went while the lock was held. Shared by
// the store's system test (test/store/store-busy.system.test.ts) and the bench (bench/store-busy.ts), which records
// the figure in BENCHMARKS.md.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import pg from 'pg';
import { chooseStore, openStore } from '../../src/store/open-store.js';
import { serveSimLab } from '../../src/sim/serve.js';
import { runCli } from './cli.js';
import { servedNodeArgs } from './served-nodes.js';

// The lock holder: waits until the run's journal shows its soak started, takes the write lock of the store with
// `BEGIN EXCLUSIVE` (no busy wait: it must get it at once), says when (epoch ms), holds it, commits, says when.
const HOLDER = String.raw`
const Database = require(process.argv[1]);
const [dir, dbFile, holdMs] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const fs = require('node:fs');
const path = require('node:path');
const soakStarted = () => {
  for (const d of fs.existsSync(dir) ? fs.readdirSync(dir) : []) {
    const j = path.join(dir, d, 'journal.jsonl');
    if (fs.existsSync(j) && /"type":"phase-start"[^\n]*"kind":"soak"/.test(fs.readFileSync(j, 'utf8'))) return true;
  }
  return false;
};
const poll = setInterval(() => {
  if (!soakStarted()) return;
  clearInterval(poll);
  const db = new Database(dbFile, { timeout: 0 });
  db.exec('BEGIN EXCLUSIVE');
  process.stdout.write('locked ' + Date.now() + '\n');
  setTimeout(() => {
    db.exec('COMMIT');
    db.close();
    process.stdout.write('released ' + Date.now() + '\n');
  }, holdMs);
}, 50);
`;

// What one locked run showed.
export interface LockedRun {
  lockS: number; // how long the lock was held
  code: number; // the run's exit code
  outcome: string;
  err: string; // the run's stderr
  storeWarnings: string[]; // its lines naming the results store
  out: string; // the reports directory
  runDir: string;
  runWallS: number; // the whole run, real time
  soakS: number; // its soak, start to end
  longestTickMs: number; // the longest interval between a node's consecutive samples that overlaps the lock
  ticksDuringLock: number; // samples per node taken while the lock was held (the fewer, the longer sampling stood still)
  gaps: { node: string; fromS: number; toS: number; reason: string }[]; // the record's sampling.gaps
}

// Who holds the store: another process holding the embedded SQLite file for `holdS` seconds, or a PostgreSQL
// session holding the tables runs are written to (LOCK TABLE ... ACCESS EXCLUSIVE) until the run has returned.
export type StoreLock = { engine: 'sqlite'; holdS: number } | { engine: 'postgres'; url: string };

// A protocol with one soak of `soakS` (preflight and identity before it), sampled every second.
function soakProtocol(dir: string, soakS: number): string {
  const quick = JSON.parse(readFileSync(join(process.cwd(), 'protocols', 'quick.json'), 'utf8')) as Record<string, unknown> & { phases: { kind: string }[] };
  const file = join(dir, 'store-busy.json');
  const soak = { name: 'soak', kind: 'soak', durationS: soakS, gpuLoad: false, linkLoad: true, msgSize: 65536, bidirectional: true };
  writeFileSync(
    file,
    JSON.stringify({ ...quick, name: 'store-busy', phases: [...quick.phases.filter((p) => p.kind === 'preflight' || p.kind === 'identity'), soak] }),
  );
  return file;
}

// One lock holder: `done` resolves with when it locked and released the store; `release` lets go (PostgreSQL; the
// SQLite holder lets go by itself after its time); `stop` ends it whatever happened.
interface Holder {
  done: Promise<{ lockedAt: number; releasedAt: number }>;
  release(): void;
  stop(): void;
}

// Holds the SQLite file from another process for `holdS` seconds.
function sqliteHolder(runsDir: string, dbFile: string, holdS: number): Holder {
  const driver = createRequire(import.meta.url).resolve('better-sqlite3');
  const child = spawn(process.execPath, ['-e', HOLDER, driver, runsDir, dbFile, String(holdS * 1000)], { stdio: ['ignore', 'pipe', 'pipe'] });
  let said = '';
  child.stdout.on('data', (b: Buffer) => (said += b.toString()));
  child.stderr.on('data', (b: Buffer) => (said += b.toString()));
  const done = new Promise<{ lockedAt: number; releasedAt: number }>((resolve, reject) =>
    child.on('close', () => {
      const lockedAt = Number(/locked (\d+)/.exec(said)?.[1]);
      const releasedAt = Number(/released (\d+)/.exec(said)?.[1]);
      if (Number.isFinite(lockedAt) && Number.isFinite(releasedAt)) resolve({ lockedAt, releasedAt });
      else reject(new Error(`the lock holder did not lock and release the store: ${said}`));
    }),
  );
  return { done, release: () => undefined, stop: () => child.kill() };
}

// Holds PostgreSQL's run tables from a session of this process once the soak started, until release().
function postgresHolder(runsDir: string, url: string): Holder {
  const client = new pg.Client({ connectionString: url });
  let release = () => undefined as void;
  const released = new Promise<void>((r) => (release = r));
  let poll: NodeJS.Timeout | undefined;
  const done = (async () => {
    await client.connect();
    await new Promise<void>((r) => (poll = setInterval(() => soakStarted(runsDir) && (clearInterval(poll), r()), 50)));
    await client.query('BEGIN');
    await client.query('LOCK TABLE runs, run_details, live IN ACCESS EXCLUSIVE MODE');
    const lockedAt = Date.now();
    await released;
    await client.query('COMMIT');
    const releasedAt = Date.now();
    await client.end();
    return { lockedAt, releasedAt };
  })();
  return { done, release: () => release(), stop: () => (clearInterval(poll), void client.end().catch(() => undefined)) };
}

// Whether a run under `runsDir` has journaled the start of its soak.
function soakStarted(runsDir: string): boolean {
  for (const d of existsSync(runsDir) ? readdirSync(runsDir) : []) {
    const j = join(runsDir, d, 'journal.jsonl');
    if (existsSync(j) && /"type":"phase-start"[^\n]*"kind":"soak"/.test(readFileSync(j, 'utf8'))) return true;
  }
  return false;
}

// Serve good-qsfp56 in real time, run the one-soak protocol against it into `dir`/reports with the store `lock`
// names, and hold that store from the soak's start.
export async function runWithStoreLocked(dir: string, o: { soakS: number; lock: StoreLock }): Promise<LockedRun> {
  mkdirSync(dir, { recursive: true });
  const out = join(dir, 'reports');
  const runsDir = join(out, 'store-busy');
  const db = o.lock.engine === 'postgres' ? o.lock.url : undefined;
  const choice = chooseStore({ out, db });
  await (await openStore(choice)).close(); // the store exists (migrated; SQLite in WAL mode) before anyone locks it
  const lab = await serveSimLab({ scenario: 'good-qsfp56', dir: join(dir, 'keys'), speed: 1, seed: 7 });
  const holder = o.lock.engine === 'sqlite' ? sqliteHolder(runsDir, choice.target, o.lock.holdS) : postgresHolder(runsDir, o.lock.url);
  const t0 = Date.now();
  try {
    const protocol = soakProtocol(dir, o.soakS);
    const args = ['run', ...servedNodeArgs(lab), '--protocol', protocol, '--label', 'store-busy'];
    const r = await runCli([...args, '--out', out, ...(db ? ['--db', db] : []), '--json']);
    const runWallS = (Date.now() - t0) / 1000;
    holder.release();
    const { lockedAt, releasedAt } = await holder.done;
    const json = JSON.parse(r.out || '{}') as { outcome?: string; runDir?: string };
    const runDir = json.runDir ?? join(runsDir, readdirSync(runsDir)[0]!);
    const lines = readFileSync(join(runDir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as { type: string; tS: number; kind?: string; node?: string; sample?: { controllerMs: number } });
    const soakStart = lines.find((l) => l.type === 'phase-start' && l.kind === 'soak')?.tS ?? NaN;
    const soakEnd = lines.find((l) => l.type === 'phase-end' && l.tS >= soakStart)?.tS ?? NaN;
    let longestTickMs = 0;
    let ticksDuringLock = Infinity;
    for (const node of lab.nodes.map((n) => n.name)) {
      const at = lines.filter((l) => l.type === 'sample' && l.node === node).map((l) => l.sample!.controllerMs);
      for (let i = 1; i < at.length; i++) if (at[i]! > lockedAt && at[i - 1]! < releasedAt) longestTickMs = Math.max(longestTickMs, at[i]! - at[i - 1]!);
      ticksDuringLock = Math.min(ticksDuringLock, at.filter((t) => t >= lockedAt && t <= releasedAt).length);
    }
    const record = JSON.parse(readFileSync(join(runDir, 'record.json'), 'utf8')) as { outcome: string; sampling: { gaps: LockedRun['gaps'] } };
    return {
      lockS: (releasedAt - lockedAt) / 1000,
      code: r.code,
      outcome: json.outcome ?? record.outcome,
      err: r.err,
      storeWarnings: r.err.split('\n').filter((l) => l.includes('results store')),
      out,
      runDir,
      runWallS,
      soakS: soakEnd - soakStart,
      longestTickMs,
      ticksDuringLock,
      gaps: record.sampling.gaps,
    };
  } finally {
    holder.stop();
    await lab.close();
  }
}
