import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { parseProtocol } from '../../src/protocol/index.js';
import { runQualification, type RunResult } from '../../src/run/qualify.js';
import type { JournalIo, JournalLine } from '../../src/run/journal.js';
import type { JournalSigner } from '../../src/run/journal-signing.js';
import { persistentTickSource } from '../../src/run/tick-source.js';
import { createLab, type SimLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';

// A qualification on the simulated lab, in process and in virtual time, with the lab kept for inspection
// (process tables, events) — the same wiring as `cablequal run --sim`.
export async function labRun(opts: {
  scenario: string;
  protocol?: 'quick' | 'spark-burnin';
  // Edits a copy of the protocol's JSON before the run (the journal keeps the edited text, as a lab's own copy would be).
  editProtocol?: (p: Record<string, unknown>) => void;
  faults?: string[];
  abortAtS?: number;
  journalIo?: JournalIo;
  // Signs the journal as it is written (the lab key's signer).
  journalSigner?: JournalSigner;
  // The run's label (default 'fault-test'); null: none, so the run dir is named by the cable serial once read.
  label?: string | null;
  // Lab seconds at which to note the load processes running on each node (runningAt).
  lookAtS?: number[];
  // Each warning the run gives the operator (ctx.warn), as the live terminal shows them.
  onWarning?: (line: string) => void;
}): Promise<
  RunResult & {
    lab: SimLab;
    journal: JournalLine[];
    abortedAtS: number | null;
    runningAtAbort: Record<string, string[]>;
    runningAt: Map<number, Record<string, string[]>>;
  }
> {
  const clock = new VirtualClock(Date.UTC(2026, 5, 1));
  const lab = createLab({ scenario: opts.scenario, seed: 7, faults: opts.faults ?? [], clock });
  const path = join(process.cwd(), 'protocols', `${opts.protocol ?? 'quick'}.json`);
  let protocolText = readFileSync(path, 'utf8');
  if (opts.editProtocol) {
    const json = JSON.parse(protocolText) as Record<string, unknown>;
    // A lab's edited copy carries a name of its own: a built-in's name is kept for the texts cablequal shipped.
    json['name'] = `lab-${String(json['name'])}`;
    opts.editProtocol(json);
    protocolText = JSON.stringify(json, null, 2);
  }
  const protocol = parseProtocol(protocolText, path);
  const ac = new AbortController();
  let abortedAtS: number | null = null;
  const runningAtAbort: Record<string, string[]> = {};
  if (opts.abortAtS !== undefined) {
    const t0 = clock.now();
    // A timer on the virtual clock: fires at exactly that simulated second, like an operator's Ctrl-C.
    void clock.sleep(opts.abortAtS * 1000).then(() => {
      abortedAtS = (clock.now() - t0) / 1000;
      for (const n of lab.nodes) runningAtAbort[n] = lab.processes(n).map((p) => p.name);
      ac.abort('interrupted by SIGINT (test)');
    });
  }
  const runningAt = new Map<number, Record<string, string[]>>();
  for (const atS of opts.lookAtS ?? []) {
    void clock.sleep(atS * 1000).then(() => runningAt.set(atS, Object.fromEntries(lab.nodes.map((n) => [n, lab.processes(n).map((p) => p.name)]))));
  }
  const result = await runQualification({
    clock,
    runners: new Map(lab.nodes.map((n) => [n, lab.runner(n)])),
    nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
    protocol,
    protocolText,
    outDir: mkdtempSync(join(tmpdir(), 'cq-faults-')),
    label: opts.label === undefined ? 'fault-test' : opts.label,
    runId: 'run1',
    log: pino({ level: 'silent' }),
    signal: ac.signal,
    simulated: true,
    scenario: opts.scenario,
    makeTickSource: (ns, intervalS) => persistentTickSource(ns, clock, { intervalS }),
    ...(opts.journalIo ? { journalIo: opts.journalIo } : {}),
    ...(opts.onWarning ? { onWarning: opts.onWarning } : {}),
    ...(opts.journalSigner ? { journalSigner: opts.journalSigner } : {}),
  });
  const journal = readFileSync(join(result.runDir, 'journal.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as JournalLine];
      } catch {
        return []; // a torn last line (disk full mid-write) is checked by the tests that make one
      }
    });
  return { ...result, lab, journal, abortedAtS, runningAtAbort, runningAt };
}

// Every number under a JSON value with its path (to look for negative counts and rates).
export function numbersIn(v: unknown, path = ''): { path: string; value: number }[] {
  if (typeof v === 'number') return [{ path, value: v }];
  if (Array.isArray(v)) return v.flatMap((x, i) => numbersIn(x, `${path}[${i}]`));
  if (v && typeof v === 'object') return Object.entries(v).flatMap(([k, x]) => numbersIn(x, `${path}.${k}`));
  return [];
}
