// Was the link loaded all soak long? The rule soak-link-load (a setup check: ERROR, never a cable grade), decided by
// this one pure function for the live run (src/run/steps/soak-loads.ts, as the soak goes) and for a re-grade
// (evidence.ts, from the journal's load lines): every link-load process must run to the soak's end, each client's
// throughput rows must keep coming (no stretch without a new row longer than maxRowGapS), and, once the soak has run,
// each direction's median load must reach the limit's share of the same direction's ib_write_bw benchmark figure.
// When another cable between the same nodes was loaded beside it (two cables qualified at once), the nodes' traffic
// was shared over both cables through the same two PCIe rails: each row is judged against its cable's share of the
// benchmark figure when it was read (half of it while the other cable's load ran, all of it once that load stopped),
// as the journal's link load-start line (the other cable) and load-sharing line (its load's end) say.
import { median } from 'simple-statistics';
import type { Limit } from '../domain/limit.js';
import type { Reason } from '../domain/outcome.js';
import type { BenchmarkRecord, DirectionLoadRecord as DirectionLoad } from '../domain/record.js';
import { RULE_DEFINITIONS } from '../rules/definitions.js';
import { rowsOf, streamKey, streamName, type LoadStreamId, type SoakLoadEvidence } from './soak-evidence.js';
import { formatNumber } from '../domain/number-format.js';

// A soak as the checks see it: its name, when it started, its planned length, and the end of what is judged (the
// time the soak stopped its loads, or now while it runs).
export interface SoakWindow {
  name: string;
  startS: number;
  durationS: number;
  endS: number;
}

export interface LinkLoadInput {
  soak: SoakWindow;
  final: boolean; // the soak ran to its end: the median is judged too
  // false: only the reasons (the live check of a soak under way, after each read of the rows, needs no loads: measuring
  // them, a median over every row so far, each time made an hour's soak quadratic). Default true.
  measure?: boolean;
  evidence: SoakLoadEvidence;
  benchmark: BenchmarkRecord['ibWriteBw'];
  limit: Limit; // soak-link-load: fail in % of the benchmark, params.maxRowGapS
  // An ended load process counts once it has been gone this long (the sampler sees a link drop, a cable FAIL, first).
  exitGraceS: number;
}

const ADVICE = `${RULE_DEFINITIONS.find((r) => r.id === 'soak-link-load')!.advice}; the cable was not judged`;
const n = formatNumber;

// How long an ended link-load process is given before it counts (the sampler sees a link drop, a cable FAIL, first).
export const exitGraceS = (samplingIntervalS: number): number => 5 * samplingIntervalS;

// The load of each direction and, for each way the link was not shown loaded, a reason (ERROR).
export function checkLinkLoad(input: LinkLoadInput): { loads: DirectionLoad[]; reasons: Reason[] } {
  const { soak, evidence, limit } = input;
  const maxGapS = limit.params?.['maxRowGapS'] ?? 30;
  const reasons: Reason[] = [];
  const say = (message: string, node: string | undefined, extra: Partial<Reason> = {}): Reason => ({
    rule: limit.rule,
    message,
    ...(node ? { node } : {}),
    phase: soak.name,
    ...extra,
    advice: ADVICE,
  });

  for (const x of evidence.exits) {
    if (x.load !== 'link' || x.tS > soak.endS || (!input.final && soak.endS - x.tS < input.exitGraceS)) continue;
    const where = x.stream ? `${streamName(x.stream)}: ` : '';
    const exit = x.exitCode !== null ? ` (exit ${x.exitCode})` : '';
    reasons.push(
      say(
        `${where}ib_write_bw ${x.process} on ${x.node} ended by itself${exit} at ${n(x.tS)} s, ${n(x.tS - soak.startS)} s into ${soak.name}, without a link-down event: the link was not loaded for the rest of the soak`,
        x.node,
        x.stream ? { rail: x.stream.rail } : {},
      ),
    );
  }

  const gaps = longestGaps(input);
  for (const g of gaps.values()) {
    if (!(g.s > maxGapS)) continue;
    reasons.push(
      say(
        `${streamName(g.id)}: no new ib_write_bw row from ${g.id.from}'s client from ${n(g.fromS)} s to ${n(g.toS)} s into the run (${n(g.s)} s; at most ${n(maxGapS)} s allowed)${g.error ? ` (${g.error})` : ''}: the link load stopped or stalled`,
        g.id.from,
        { rail: g.id.rail, value: Number(g.s.toFixed(3)), unit: 's', limit: `<= ${n(maxGapS)} s` },
      ),
    );
  }

  const loads = input.final || input.measure !== false ? directionLoads(input, gaps) : [];
  if (input.final) {
    if (evidence.reads.length === 0) {
      reasons.push(say(`${soak.name}: the journal has no throughput row of the link load: the link was not shown loaded`, evidence.streams[0]?.from));
    }
    for (const d of evidence.reads.length ? loads : []) {
      if (d.medianGbps === null) {
        reasons.push(say(`${d.from} -> ${d.to} ${soak.name}: a rail of this direction printed no throughput row: the link was not shown loaded`, d.from));
      } else if (d.pctOfBenchmark !== null && d.pctOfBenchmark < limit.fail) {
        const figure = d.sharedBy ? `its cable's share (1/${d.sharedBy} while the other cable's load ran) of ` : '';
        reasons.push(
          say(
            `${d.from} -> ${d.to} ${soak.name}: median load ${n(d.medianGbps)} Gb/s (each of ${d.rails} rails' median over ${d.rows} rows, summed) is ${d.pctOfBenchmark} % of ${figure}this direction's ib_write_bw figure ${n(d.benchmarkGbps!)} Gb/s (< ${n(limit.fail)} %): the link was not fully loaded`,
            d.from,
            { value: d.pctOfBenchmark, unit: '%', limit: `>= ${n(limit.fail)} %` },
          ),
        );
      }
    }
  }
  return { loads, reasons };
}

type Gap = { id: LoadStreamId; s: number; fromS: number; toS: number; error?: string };

// Per stream, the longest stretch a read found without a new row: from the last read that brought rows (or the load's
// start) to a read that brought none. A read that brings rows after a stretch it could not read ends it unjudged: rows
// printed meanwhile were printed. Reads after the end of the window are not looked at.
function longestGaps(input: LinkLoadInput): Map<string, Gap> {
  const { evidence, soak } = input;
  const startS = evidence.linkStartS ?? soak.startS;
  const last = new Map<string, number>();
  const out = new Map<string, Gap>();
  for (const s of evidence.streams) out.set(streamKey(s), { id: s, s: 0, fromS: startS, toS: startS });
  for (const r of evidence.reads) {
    if (r.tS > soak.endS) break;
    for (const s of r.streams) {
      const k = streamKey(s);
      const since = last.get(k) ?? startS;
      if (s.gbps.length > 0) {
        last.set(k, r.tS);
        if (!out.has(k)) out.set(k, { id: { rail: s.rail, from: s.from, to: s.to }, s: 0, fromS: startS, toS: startS });
        continue;
      }
      const g = out.get(k);
      if (!g || r.tS - since > g.s)
        out.set(k, { id: { rail: s.rail, from: s.from, to: s.to }, s: r.tS - since, fromS: since, toS: r.tS, ...(s.error ? { error: s.error } : {}) });
    }
  }
  return out;
}

// Per direction: each rail's median summed, against the same direction's benchmark figure (runs before per-direction
// benchmarks have one figure for both); beside another cable, each row against its cable's share when it was read.
function directionLoads(input: LinkLoadInput, gaps: ReadonlyMap<string, Gap>): DirectionLoad[] {
  const out: DirectionLoad[] = [];
  const ofShare = new Map<DirectionLoad, number>();
  for (const { id, gbps, share } of rowsOf(input.evidence).values()) {
    let d = out.find((x) => x.from === id.from && x.to === id.to);
    if (!d) {
      const bw = input.benchmark;
      const benchmarkGbps = bw
        ? bw.perDirection
          ? (bw.perDirection.find((x) => x.from === id.from && x.to === id.to)?.sumMedianGbps ?? null)
          : bw.sumMedianGbps
        : null;
      out.push(
        (d = { phase: input.soak.name, from: id.from, to: id.to, rails: 0, rows: 0, medianGbps: 0, benchmarkGbps, pctOfBenchmark: null, longestGapS: 0 }),
      );
    }
    d.rails++;
    d.rows += gbps.length;
    d.medianGbps = d.medianGbps === null || gbps.length === 0 ? null : d.medianGbps + median(gbps);
    if (gbps.length) ofShare.set(d, (ofShare.get(d) ?? 0) + median(gbps.map((g, i) => g / share[i]!)));
    d.longestGapS = Math.max(d.longestGapS, gaps.get(streamKey(id))?.s ?? 0);
  }
  // Two cables loaded at once: how many, and until when (the other cable's load stopped early).
  const { sharedWith, sharedUntilS } = input.evidence;
  for (const d of out) {
    // The figures as stated are the figures compared.
    d.longestGapS = Number(d.longestGapS.toFixed(3));
    if (d.medianGbps !== null) d.medianGbps = Number(d.medianGbps.toFixed(2));
    if (sharedWith.length) d.sharedBy = 1 + sharedWith.length;
    if (sharedWith.length && sharedUntilS !== null) d.sharedUntilS = sharedUntilS;
    // Alone, each row against the whole figure: the median as stated; beside another cable, the rows against their share.
    const loaded = sharedWith.length ? (ofShare.get(d) ?? null) : d.medianGbps;
    if (d.medianGbps !== null && loaded !== null && d.benchmarkGbps !== null && d.benchmarkGbps > 0)
      d.pctOfBenchmark = Number(((100 * loaded) / d.benchmarkGbps).toFixed(2));
  }
  return out;
}
