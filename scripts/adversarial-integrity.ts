// The families of issue #32 items 1, 2 and 5 for scripts/adversarial.ts: a journal edited without the lab key (each
// edit re-chained, as a forger with a script would), a record.json the store and compare must not trust, and a
// journal lost while the run writes it. Each attack runs the built CLI in its own process, against runs this script
// makes with a throw-away lab key (the quick protocol on the simulated lab).
import { spawn, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { CHAIN_START, chainLine, lineHash } from '../src/run/journal-chain.js';
import { chooseStore, openStore } from '../src/store/open-store.js';

type Line = Record<string, unknown>;
interface Outcome {
  code: number | null;
  out: string;
  err: string;
  timedOut: boolean;
}
export interface Harness {
  bin: string;
  work: string;
  env: NodeJS.ProcessEnv;
  limitMs: number;
  family: (name: string, what: string) => (attack: string, run: () => string | null | Promise<string | null>) => void;
  clean: (o: Outcome & { ms: number }) => string | null;
  expectOneLine: (o: Outcome & { ms: number }, code: number, says: RegExp) => string | null;
}

export function integrityFamilies(h: Harness): void {
  const root = join(h.work, 'integrity');
  mkdirSync(root, { recursive: true });
  const keyDir = join(root, 'keys');
  const env: NodeJS.ProcessEnv = { ...h.env, CABLEQUAL_LAB_KEY: join(keyDir, 'lab-key.pem'), CABLEQUAL_RESCUE_DIR: join(root, 'rescued') };
  delete env['CABLEQUAL_LAB_PUBLIC_KEY']; // the lab's own key files pin it
  const cli = (args: string[], e: NodeJS.ProcessEnv = env) => {
    const t = performance.now();
    const r = spawnSync(process.execPath, [h.bin, ...args], { cwd: root, env: e, encoding: 'utf8', timeout: h.limitMs, maxBuffer: 64 << 20 });
    return { code: r.status, out: r.stdout ?? '', err: r.stderr ?? '', ms: performance.now() - t, timedOut: r.error !== undefined || r.signal !== null };
  };
  spawnSync(process.execPath, [h.bin, 'keygen', keyDir], { env, encoding: 'utf8' });
  const runs: Record<string, string> = {};
  const runOf = (scenario: string): string => {
    if (!runs[scenario]) {
      const o = cli(['run', '--sim', scenario, '--protocol', 'quick', '--label', scenario, '--out', join(root, 'reports'), '--json']);
      runs[scenario] = (JSON.parse(o.out) as { runDir: string }).runDir;
    }
    return runs[scenario];
  };
  const linesOf = (dir: string): Line[] =>
    readFileSync(join(dir, 'journal.jsonl'), 'utf8')
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as Line);
  let n = 0;
  // A copy of a run directory whose journal is `lines`, re-chained (or with no prev at all).
  const forged = (from: string, lines: Line[], chain = true): string => {
    const dir = join(root, `forged-${n++}`, 'run');
    cpSync(from, dir, { recursive: true });
    let prev = CHAIN_START;
    const out = lines.map((l) => {
      const o = { ...l };
      delete o['prev'];
      if (!chain) return JSON.stringify(o);
      const line = chainLine(JSON.stringify(o), prev);
      prev = lineHash(line);
      return line;
    });
    writeFileSync(join(dir, 'journal.jsonl'), `${out.join('\n')}\n`);
    return dir;
  };
  const graded = (dir: string) => {
    const o = cli(['grade', dir, '--json']);
    try {
      return { ...o, j: JSON.parse(o.out) as { outcome: string; simulated: boolean } };
    } catch {
      return { ...o, j: null };
    }
  };
  const RANK: Record<string, number> = { PASS: 3, MARGINAL: 2, FAIL: 1, ERROR: 0, ABORTED: 0 };

  // --- journal edits -------------------------------------------------------------------------------------------------
  const edits = h.family(
    'journal edits',
    'a signed journal edited without the lab key and re-chained: `grade` no better than the run, `report` refuses (exit 2, one line)',
  );
  const relabel = (to: string) => (lines: Line[]) =>
    lines.map((l) => (l['type'] === 'sample' && String(l['phase']).startsWith('soak') ? { ...l, phase: to } : l));
  const withIdentityOf = (other: string) => (lines: Line[]) => {
    const id = linesOf(runOf(other)).find((l) => l['type'] === 'identity')!;
    return lines.map((l) => (l['type'] === 'identity' ? { ...l, ends: id['ends'] } : l));
  };
  const relaxed = (lines: Line[]) =>
    lines.map((l) => {
      if (l['type'] !== 'run-start') return l;
      const p = JSON.parse(String(l['protocolText'])) as { name: string; limits: Line[] };
      p.name = 'lab-quick';
      for (const lim of p.limits) if (lim['rule'] === 'lane-ratio') Object.assign(lim, { fail: 1e9, marginal: 1e8 });
      const text = JSON.stringify(p, null, 2);
      const sha256 = lineHash(text);
      return { ...l, protocolText: text, protocol: { ...(l['protocol'] as object), name: 'lab-quick', sha256 } };
    });
  const unsigned = (lines: Line[]) => lines.filter((l) => l['type'] !== 'journal-sig');
  // [attack, scenario, edit, chained (default true), graded for a look (a better grade only with the warning that the
  // signatures do not hold: the journal's own protocol is what the run ran, and `report` refuses it)]
  const cases: [string, string, (lines: Line[]) => Line[], boolean?, boolean?][] = [
    ['soak samples relabelled nccl', 'steady-lane-qsfp56', relabel('nccl')],
    ['soak samples relabelled an unknown phase', 'steady-lane-qsfp56', relabel('warm-up')],
    ["the identity line replaced by the clone's", 'good-qsfp56', withIdentityOf('failing-clone')],
    ['the protocol renamed with relaxed lane-ratio limits and its new sha256', 'steady-lane-qsfp56', relaxed, true, true],
    ['every signature line deleted', 'steady-lane-qsfp56', (l) => unsigned(relabel('nccl')(l))],
    [
      'signature lines deleted and run-start saying no lab key',
      'steady-lane-qsfp56',
      (l) => unsigned(relabel('nccl')(l)).map((x) => (x['type'] === 'run-start' ? { ...x, journalSigner: null } : x)),
    ],
    [
      'signer and signature lines deleted (an "old" journal)',
      'steady-lane-qsfp56',
      (l) =>
        unsigned(relabel('nccl')(l)).map((x) => {
          const o = { ...x };
          delete o['journalSigner'];
          return o;
        }),
    ],
    ['chain and every prev deleted', 'steady-lane-qsfp56', relabel('nccl'), false],
    [
      'a sample line deleted, re-chained',
      'failing-clone',
      (l) => l.filter((x, i) => !(x['type'] === 'sample' && i === l.findIndex((y) => y['type'] === 'decision') - 1)),
    ],
  ];
  for (const [name, scenario, edit, chain, forALook] of cases) {
    edits(name, () => {
      const src = runOf(scenario);
      const dir = forged(src, edit(linesOf(src)), chain !== false);
      const g = graded(dir);
      const bad = h.clean(g);
      if (bad) return bad;
      const was = graded(src).j!.outcome;
      if (!g.j) return `grade printed no verdict: ${g.err.split('\n')[0]}`;
      const warned = /^warning: .*journal signatures do not hold/m.test(g.err);
      if (RANK[g.j.outcome]! > RANK[was]! && !(forALook && warned)) return `grades ${g.j.outcome}, the run was ${was}`;
      return h.expectOneLine(cli(['report', dir]), 2, /refusing to re-issue its documents/);
    });
  }
  edits('simulated: false and the node facts rewritten', () => {
    const src = runOf('good-qsfp56');
    const lines = linesOf(src).map((l) => {
      if (l['type'] === 'run-start') return { ...l, simulated: false, scenario: null, clockStartedAt: undefined };
      if (l['type'] === 'node-info') return { ...l, record: { ...(l['record'] as object), simulated: undefined, dmi: { sysVendor: 'NVIDIA' } } };
      return l;
    });
    const g = graded(forged(src, lines));
    return h.clean(g) ?? (g.j?.simulated === true ? null : 'graded as a real run');
  });
  edits('re-signed with a forger`s own key', () => {
    const forger = join(root, 'forger');
    spawnSync(process.execPath, [h.bin, 'keygen', forger], { env, encoding: 'utf8' });
    const dir = forged(runOf('steady-lane-qsfp56'), linesOf(runOf('steady-lane-qsfp56')));
    return h.expectOneLine(cli(['report', dir], { ...env, CABLEQUAL_LAB_KEY: join(forger, 'lab-key.pem') }), 2, /signed by sha256:\w+, not by the lab key/);
  });
  edits('db import of the relabelled journal', () => {
    const src = runOf('steady-lane-qsfp56');
    const dir = forged(src, relabel('nccl')(linesOf(src)));
    const o = cli(['db', 'import', dir, '--out', join(root, `store-${n++}`), '--db', join(root, `store-${n++}.db`)]);
    const bad = h.clean(o);
    if (bad) return bad;
    return o.code === 2 && /not imported: .*journal signatures do not hold/.test(o.err) ? null : `exit ${o.code}: ${o.err.split('\n')[0]}`;
  });

  // --- store re-checks -----------------------------------------------------------------------------------------------
  const store = h.family('store re-checks', '`db import` and `compare` of a record.json that is not what its journal says: the journal`s verdict, or refused');
  const rowsOf = async (db: string) => {
    const s = await openStore(chooseStore({ out: root, db, env: {} }));
    try {
      return await s.db.all<{ run_id: string; outcome: string; run_dir: string }>('SELECT run_id, outcome, run_dir FROM runs ORDER BY run_dir');
    } finally {
      await s.close();
    }
  };
  const editedRecord = (scenario: string, edit: (r: Line) => Line) => {
    const dir = join(root, `edited-${n++}`, 'run');
    cpSync(runOf(scenario), dir, { recursive: true });
    writeFileSync(join(dir, 'record.json'), JSON.stringify(edit(JSON.parse(readFileSync(join(dir, 'record.json'), 'utf8')) as Line)));
    return dir;
  };
  for (const [from, to, scenario] of [
    ['FAIL', 'PASS', 'failing-clone'],
    ['MARGINAL', 'PASS', 'steady-lane-qsfp56'],
    ['FAIL', 'MARGINAL', 'failing-clone'],
  ] as const) {
    store(`db import of a record edited ${from} -> ${to}`, async () => {
      const dir = editedRecord(scenario, (r) => ({ ...r, outcome: to, reasons: [] }));
      const db = join(root, `store-${n++}.db`);
      const o = cli(['db', 'import', dir, '--db', db]);
      const bad = h.clean(o);
      if (bad) return bad;
      const rows = await rowsOf(db);
      return rows.length === 1 && rows[0]!.outcome === from ? null : `stored ${rows.map((r) => r.outcome).join(', ') || 'nothing'}`;
    });
    store(`compare of a record edited ${from} -> ${to}`, () => {
      const dir = editedRecord(scenario, (r) => ({ ...r, outcome: to, reasons: [] }));
      const out = join(root, `compare-${n++}.csv`);
      const o = cli(['compare', dir, '--out', out]);
      const bad = h.clean(o);
      if (bad) return bad;
      const row = readFileSync(out, 'utf8').trim().split('\n')[1] ?? '';
      return new RegExp(`(^|,)${from}(,|$)`).test(row) && !new RegExp(`(^|,)${to}(,|$)`).test(row) ? null : `compared as: ${row.slice(0, 80)}`;
    });
  }
  store("a copy of a run directory outside --out carrying the run's id", async () => {
    const db = join(root, `store-${n++}.db`);
    const first = runOf('failing-clone');
    const copy = editedRecord('failing-clone', (r) => ({ ...r, outcome: 'PASS' }));
    cli(['db', 'import', first, '--db', db]);
    const o = cli(['db', 'import', copy, '--db', db]);
    const bad = h.clean(o);
    if (bad) return bad;
    if (o.code !== 2 || !o.err.includes(`belongs to ${first}; ${copy} claims it too`)) return `exit ${o.code}: ${o.err.split('\n')[0]}`;
    const rows = await rowsOf(db);
    return rows.length === 1 && rows[0]!.run_dir === first && rows[0]!.outcome === 'FAIL' ? null : 'the row was overwritten';
  });
  store("a record.json carrying another run's id", async () => {
    const db = join(root, `store-${n++}.db`);
    const other = JSON.parse(readFileSync(join(runOf('good-qsfp56'), 'record.json'), 'utf8')) as { runId: string };
    cli(['db', 'import', runOf('good-qsfp56'), '--db', db]);
    const dir = editedRecord('failing-clone', (r) => ({ ...r, runId: other.runId, outcome: 'PASS' }));
    cli(['db', 'import', dir, '--db', db]);
    const rows = await rowsOf(db);
    const good = rows.find((r) => r.run_id === other.runId);
    return good?.outcome === 'PASS' && good.run_dir === runOf('good-qsfp56') && rows.length === 2 ? null : `rows: ${JSON.stringify(rows)}`;
  });

  // --- faults mid-run ------------------------------------------------------------------------------------------------
  const faults = h.family(
    'faults mid-run',
    'the journal deleted, or the run directory replaced, while `run --sim --speed 50` writes: ERROR exit 3 naming where the record is',
  );
  // A sped-up run; once its journal reaches `phase`, `act` on the run directory; the run's outcome.
  const faultRun = (label: string, phase: string, act: (runDir: string) => void): Promise<Outcome & { ms: number; runDir: string | null }> =>
    new Promise((resolve) => {
      const out = join(root, `faults-${n++}`);
      const t = performance.now();
      const child = spawn(
        process.execPath,
        [h.bin, 'run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--speed', '50', '--label', label, '--out', out, '--db', 'off'],
        {
          cwd: root,
          env,
        },
      );
      let o = '';
      let e = '';
      child.stdout.on('data', (d: Buffer) => (o += d.toString()));
      child.stderr.on('data', (d: Buffer) => (e += d.toString()));
      let runDir: string | null = null;
      const poll = setInterval(() => {
        const base = join(out, label);
        const id = existsSync(base) ? readdirSync(base)[0] : undefined;
        if (!id) return;
        const journal = join(base, id, 'journal.jsonl');
        if (
          existsSync(journal) &&
          readFileSync(journal, 'utf8').includes(`"phase-start","tS":`) &&
          readFileSync(journal, 'utf8').includes(`"phase":"${phase}"`)
        ) {
          clearInterval(poll);
          runDir = join(base, id);
          act(runDir);
        }
      }, 50);
      const timer = setTimeout(() => child.kill('SIGKILL'), h.limitMs);
      child.on('exit', (code, signal) => {
        clearInterval(poll);
        clearTimeout(timer);
        resolve({ code, out: o, err: e, ms: performance.now() - t, timedOut: signal !== null, runDir });
      });
    });
  // The run's progress lines (stderr is not a terminal here) come before its last line, the one that says what happened.
  const lastLine = (r: Outcome & { ms: number }, code: number, says: RegExp) =>
    h.expectOneLine({ ...r, err: `${r.err.trimEnd().split('\n').at(-1) ?? ''}\n` }, code, says) ?? h.clean(r);
  faults('the journal deleted in the loaded soak', async () => {
    const r = await faultRun('deleted', 'soak-loaded', (d) => unlinkSync(join(d, 'journal.jsonl')));
    const bad = lastLine(r, 3, /ENOENT \(the journal file was deleted while the run was writing it\); loads stopped; journal, record and run report in /);
    if (bad) return bad;
    const rec = JSON.parse(readFileSync(join(r.runDir!, 'record.json'), 'utf8')) as { outcome: string; reasons: { rule: string }[] };
    return rec.outcome === 'ERROR' && rec.reasons[0]?.rule === 'journal-write' ? null : `record says ${rec.outcome}`;
  });
  faults('the journal deleted, then graded again', async () => {
    const r = await faultRun('regraded', 'soak-idle', (d) => unlinkSync(join(d, 'journal.jsonl')));
    if (r.code !== 3 || !r.runDir) return `exit ${r.code}`;
    const g = graded(r.runDir);
    return (
      h.clean(g) ?? (g.j?.outcome === 'ERROR' && !/controller stopped/.test(g.out) && /journal-write/.test(g.out) ? null : `grade says ${g.out.slice(0, 80)}`)
    );
  });
  faults('the run directory replaced by a file', async () => {
    const r = await faultRun('replaced', 'soak-loaded', (d) => {
      renameSync(d, `${d}.moved`);
      writeFileSync(d, 'not a directory\n');
    });
    const bad = lastLine(r, 3, /could not take them: journal, record and run report are in .*rescued/);
    if (bad) return bad;
    const dir = /are in (\S+)$/.exec(r.err.trim())?.[1];
    return dir && existsSync(join(dir, 'record.json')) ? null : 'no record in the fallback';
  });
}
