// Sections 3 and 5 on the simulated lab in virtual time: the failing-clone decision timing, and a 10 Hz journal of the
// whole procedure for the grading benchmark (section 4, the CLI's own cost, is bench/sim-cli.ts).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import pino from 'pino';
import { intervalDelta } from '../src/analysis/counters.js';
import { canonicalRail } from '../src/analysis/counters.js';
import { poissonLowerBound } from '../src/analysis/poisson.js';
import type { NodeSample } from '../src/domain/sample.js';
import type { RunRecord } from '../src/domain/record.js';
import { parseProtocol, limitOf } from '../src/protocol/index.js';
import { readJournal } from '../src/run/journal.js';
import { decodeSample } from '../src/run/sample-codec.js';
import { runQualification } from '../src/run/qualify.js';
import { persistentTickSource } from '../src/run/tick-source.js';
import { createLab, type SimLab } from '../src/sim/lab.js';
import { VirtualClock } from '../src/sim/virtual-clock.js';
import { summarize, type Summary } from './stats.js';

export const PROTOCOL_PATH = new URL('../protocols/spark-burnin.json', import.meta.url).pathname;

// One simulated run as `cablequal run --sim` does it (without the report writers), timed on the wall clock.
export async function runSim(
  scenario: string,
  protocolText: string,
  outDir: string,
  runId: string,
): Promise<{ wallMs: number; record: RunRecord; runDir: string; lab: SimLab; startMs: number }> {
  const startMs = 1_767_225_600_000; // 2026-01-01T00:00:00Z, virtual
  const clock = new VirtualClock(startMs);
  const t0 = performance.now();
  const lab = createLab({ scenario, faults: [], clock });
  const runners = new Map(lab.nodes.map((n) => [n, lab.runner(n)]));
  try {
    const { record, runDir } = await runQualification({
      clock,
      runners,
      nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
      protocol: parseProtocol(protocolText, 'protocols/spark-burnin.json'),
      protocolText,
      outDir,
      label: scenario,
      runId,
      log: pino({ level: 'silent' }),
      signal: new AbortController().signal,
      simulated: true,
      scenario,
      makeTickSource: (ns, intervalS) => persistentTickSource(ns, clock, { intervalS }),
    });
    return { wallMs: performance.now() - t0, record, runDir, lab, startMs };
  } finally {
    await Promise.all([...runners.values()].map((r) => r.close().catch(() => undefined)));
  }
}

// Section 5: failing-clone. Anomaly = first tick where a lane's own BER over that one tick is certainly (95% lower
// bound) beyond the fec-window FAIL line (the condition the watch then has to see over a full window, held for holdS);
// decision = the journal's `decision` line; link drop = the simulator's first `link-down` event (lab.events, same
// virtual time base as the journal) in the same scenario run again with the statistical early stops switched off.
export async function benchFailingClone(reps: number, outDir: string, log: (s: string) => void) {
  const text = readFileSync(PROTOCOL_PATH, 'utf8');
  const protocol = parseProtocol(text, 'protocols/spark-burnin.json');
  const fw = limitOf(protocol, 'fec-window');
  const failBer = 2.4e-4 / 10 ** fw.fail;
  const runs: {
    wallMs: number;
    outcome: string;
    noEarlyStopOutcome: string;
    anomalyS: number | null;
    decisionS: number | null;
    linkDownS: number | null;
    anomalyToDecisionS: number | null;
    decisionToLinkDownS: number | null;
    rule: string | null;
  }[] = [];
  for (let i = 0; i < reps; i++) {
    const r = await runSim('failing-clone', text, join(outDir, 'clone'), `clone-${i}`);
    const lines = readJournal(join(r.runDir, 'journal.jsonl')).lines;
    const decision = lines.find((l) => l.type === 'decision');
    const prev = new Map<string, NodeSample>();
    let anomalyS: number | null = null;
    for (const l of lines) {
      if (l.type !== 'sample' || anomalyS !== null) continue;
      const s = decodeSample(l['sample']);
      const before = prev.get(s.node);
      prev.set(s.node, s);
      const a = before && canonicalRail(before);
      const b = canonicalRail(s, a?.netdev);
      if (!a || !b || !before) continue;
      const lanes = b.lanes ?? 4;
      const d = intervalDelta(a, b, lanes);
      const dt = (s.tMs - before.tMs) / 1000;
      if (d === 'reset' || dt <= 0) continue;
      if (d.laneErrors.some((k) => poissonLowerBound(k) / (dt * (212.5e9 / lanes)) > failBer)) anomalyS = l.tS ?? null;
    }
    // The run stops the loads at the decision, so the drop never comes in it: the same scenario again with every
    // early stop but link-down unable to FAIL (the FEC window, the lane ratio, and the CRC and post-FEC errors of the
    // uncorrectable codewords that come shortly before the drop) shows when the link would have dropped.
    // Within the limits' declared ranges: the windows must hold for a day (longer than any soak), and a million CRC or
    // post-FEC errors (the most a limit may say) are far more than the clone counts before its drop.
    const noStop = JSON.parse(text) as { limits: { rule: string; fail: number; holdS?: number }[] };
    for (const l of noStop.limits) {
      if (l.rule === 'fec-window' || l.rule === 'lane-ratio') l.holdS = 86_400;
      if (l.rule === 'crc-errors' || l.rule === 'post-fec-errors') l.fail = 1e6;
    }
    const cf = await runSim('failing-clone', JSON.stringify(noStop), join(outDir, 'clone-no-early-stop'), `clone-nostop-${i}`);
    const cfStart = readJournal(join(cf.runDir, 'journal.jsonl')).lines.find((l) => l.type === 'run-start');
    const cfOffsetS = cfStart ? (Date.parse(String(cfStart['startedAt'])) - cf.startMs) / 1000 : 0;
    const linkDown = cf.lab.events.find((e) => e.kind === 'link-down');
    const decisionS = typeof decision?.tS === 'number' ? decision.tS : null;
    const linkDownS = linkDown ? linkDown.tS - cfOffsetS : null;
    const reason = decision?.['reason'] as { rule?: string } | undefined;
    runs.push({
      wallMs: r.wallMs,
      outcome: r.record.outcome,
      noEarlyStopOutcome: cf.record.outcome,
      anomalyS,
      decisionS,
      linkDownS,
      anomalyToDecisionS: anomalyS !== null && decisionS !== null ? decisionS - anomalyS : null,
      decisionToLinkDownS: decisionS !== null && linkDownS !== null ? linkDownS - decisionS : null,
      rule: reason?.rule ?? null,
    });
    log(`  failing-clone rep ${i + 1}/${reps}: ${r.record.outcome} anomaly ${anomalyS} s, decision ${decisionS} s, link-down ${linkDownS} s`);
  }
  return {
    fecWindowFailDecades: fw.fail,
    windowS: fw.params?.['windowS'] ?? null,
    holdS: fw.params?.['holdS'] ?? null,
    runs,
    wallMs: summarize(runs.map((r) => r.wallMs)),
  };
}

// Section 3, step 1: the whole default procedure at 10 Hz (a protocol copy with samplingIntervalS 0.1), written by
// the real run code on the simulated lab: the two soaks alone are 70 minutes, 42,000 ticks per node.
export async function makeTenHzJournal(
  outDir: string,
): Promise<{ runDir: string; wallMs: number; bytes: number; lines: number; sampleLines: number; simulatedS: number }> {
  const p = JSON.parse(readFileSync(PROTOCOL_PATH, 'utf8')) as Record<string, unknown>;
  p['samplingIntervalS'] = 0.1;
  const r = await runSim('good-qsfp56', JSON.stringify(p, null, 2), join(outDir, 'tenhz'), 'tenhz');
  const path = join(r.runDir, 'journal.jsonl');
  const text = readFileSync(path, 'utf8');
  const lines = text.split('\n').filter((l) => l !== '');
  const last = JSON.parse(lines.at(-1)!) as { tS?: number };
  return {
    runDir: r.runDir,
    wallMs: r.wallMs,
    bytes: Buffer.byteLength(text),
    lines: lines.length,
    sampleLines: lines.filter((l) => l.startsWith('{"type":"sample"')).length,
    simulatedS: last.tS ?? 0,
  };
}

// Section 3, step 2: `gradeRunDir` in a fresh child process per repetition (wall time of the call, peak RSS).
export function benchGrade(runDir: string, reps: number, log: (s: string) => void) {
  const child = new URL('./grade-child.ts', import.meta.url).pathname;
  const runs: { wallMs: number; cpuMs?: number; maxRssMB: number; baselineRssMB: number; outcome: string }[] = [];
  for (let i = 0; i < reps; i++) {
    const out = execFileSync(process.execPath, ['--import', 'tsx', child, runDir], { encoding: 'utf8', maxBuffer: 1 << 20 });
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as (typeof runs)[number];
    runs.push(r);
    log(`  grade rep ${i + 1}/${reps}: ${r.outcome} in ${r.wallMs.toFixed(0)} ms (CPU ${r.cpuMs?.toFixed(0)} ms), peak RSS ${r.maxRssMB.toFixed(0)} MB`);
  }
  return {
    runs,
    wallMs: summarize(runs.map((r) => r.wallMs)),
    cpuMs: summarize(runs.map((r) => r.cpuMs ?? null)),
    maxRssMB: summarize(runs.map((r) => r.maxRssMB)),
    baselineRssMB: summarize(runs.map((r) => r.baselineRssMB)),
  };
}

export type { Summary };
