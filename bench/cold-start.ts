// Section 7: the CLI's cold start. `node bin/cablequal.js <command>` (the built dist/) for `--help`, `status` and
// `verify`, each started fresh, interleaved with a bare `node -e 0`, against which each is a ratio; and how many
// modules each loads (test/fixtures/module-log.mjs), npm packages named. With CQ_BENCH_BEFORE=<dir> (a built checkout
// of an earlier commit, e.g. `git archive <commit> | tar -x -C dir`, node_modules linked, `npx tsc -p
// tsconfig.build.json`), its binary is measured in the same rounds as `before`.
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { summarize, type Summary } from './stats.js';

const root = new URL('..', import.meta.url).pathname;
const BIN = join(root, 'bin', 'cablequal.js');
const MODULE_LOG = join(root, 'test', 'fixtures', 'module-log.mjs');

// One command measured: its arguments, wall times (ms), and the modules one start loads.
export interface ColdStartCommand {
  name: string;
  argv: string[];
  wallMs: Summary | null;
  ratio: Summary | null; // wall / the bare node start of the same round
  modules: number;
  packages: string[]; // npm packages among them
}

export interface ColdStartResult {
  reps: number;
  nodeMs: Summary | null;
  commands: ColdStartCommand[];
  // The same commands of an earlier build, measured in the same rounds (CQ_BENCH_BEFORE), and which commit it was.
  before?: { label: string; commands: ColdStartCommand[] };
}

// Milliseconds one `node <args>` takes from spawn to exit.
function timed(args: string[], cwd: string): number {
  const t0 = performance.now();
  const r = spawnSync(process.execPath, args, { cwd, stdio: 'ignore' });
  if (r.error) throw r.error;
  return performance.now() - t0;
}

// The modules `node <args>` loads, by URL.
function modulesOf(args: string[], cwd: string, work: string): string[] {
  const log = join(work, 'modules.log');
  rmSync(log, { force: true });
  spawnSync(process.execPath, ['--import', MODULE_LOG, ...args], { cwd, stdio: 'ignore', env: { ...process.env, CQ_MODULE_LOG: log } });
  return readFileSync(log, 'utf8').split('\n').filter(Boolean);
}

// `reps` rounds, each: bare node, then every command once (and the earlier build's, when given); `npm run build`
// first so dist/ is the current source.
export function benchColdStart(reps: number, work: string, log: (s: string) => void, before?: { root: string; label: string }): ColdStartResult {
  execFileSync('npm', ['run', 'build', '--silent'], { cwd: root, stdio: 'ignore' });
  mkdirSync(work, { recursive: true });
  // A finished run of the previous version to verify (test/fixtures/journals-v1: a real simulated run), and an empty reports dir.
  const run = join(work, 'run');
  cpSync(join(root, 'test', 'fixtures', 'journals-v1', 'good-qsfp56-quick'), run, { recursive: true });
  writeFileSync(join(run, 'journal.jsonl'), gunzipSync(readFileSync(join(run, 'journal.jsonl.gz'))));
  mkdirSync(join(work, 'reports'), { recursive: true });
  const commands = [
    { name: '--help', argv: ['--help'] },
    { name: 'status', argv: ['status', '--out', 'reports'] },
    { name: 'verify', argv: ['verify', join(run, 'certificate.json')] },
  ];
  const bins = [BIN, ...(before ? [join(before.root, 'bin', 'cablequal.js')] : [])];
  const node: number[] = [];
  const wall = bins.map(() => commands.map(() => [] as number[]));
  const ratio = bins.map(() => commands.map(() => [] as number[]));
  for (let i = 0; i < reps; i++) {
    const base = timed(['-e', '0'], work);
    node.push(base);
    bins.forEach((bin, b) =>
      commands.forEach((c, k) => {
        const ms = timed([bin, ...c.argv], work);
        wall[b]![k]!.push(ms);
        ratio[b]![k]!.push(ms / base);
      }),
    );
  }
  const [now, was] = bins.map((bin, b) =>
    commands.map((c, k) => {
      const modules = modulesOf([bin, ...c.argv], work, work);
      const packages = [...new Set(modules.map((u) => /\/node_modules\/((?:@[^/]+\/)?[^/]+)\//.exec(u)?.[1]).filter((p): p is string => Boolean(p)))].sort();
      const r = { ...c, wallMs: summarize(wall[b]![k]!), ratio: summarize(ratio[b]![k]!), modules: modules.length, packages };
      log(`  ${b ? 'before ' : ''}${c.name}: ${r.wallMs?.median.toFixed(0)} ms, ${r.ratio?.median.toFixed(2)}x node, ${r.modules} modules`);
      return r;
    }),
  );
  return { reps, nodeMs: summarize(node), commands: now!, ...(before && was ? { before: { label: before.label, commands: was } } : {}) };
}
