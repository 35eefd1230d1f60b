// A verdict is earned from what the journal measured, never from what it leaves out: before a cable is graded PASS or
// MARGINAL, every check the live run made is made again over the journal's own evidence (the benchmark lines, the
// node facts, the identity, the samples), every phase of the protocol must have started and ended, and the samples
// must cover each phase as the protocol's sampling promised. A `setup-error` line deleted, a soak's samples cut out or
// a killed run given a `run-end` line therefore grade ERROR, never PASS. Pure: the record builder hands the facts in.
import type { Reason } from '../domain/outcome.js';
import type { BenchmarkRecord, CableEndRecord, NodeRecord, PhaseRecord, SoakLoadRecord } from '../domain/record.js';
import type { Protocol } from '../protocol/types.js';
import type { RuleDeclaration } from '../rules/definitions.js';
import { limitOf } from '../protocol/limits.js';
import { checkGpuLoad } from './gpu-load-check.js';
import { checkLinkLoad, exitGraceS } from './link-load-check.js';
import { emptyEvidence, type SoakLoadEvidence } from './soak-evidence.js';
import { formatNumber } from '../domain/number-format.js';

// One node's samples as the journal holds them: the controller time (line tS), tick, and mean GPU utilisation; the
// ticks the run journaled as skipped (unreadable output) and when it journaled the node's gaps (no sample).
export interface NodeTimeline {
  tS: number[];
  ticks: number[];
  gpuUtilPct: (number | null)[];
  skippedTicks: Set<number>;
  gapStartsS: number[];
}

// What the evidence checks read from a journal.
export interface EvidenceInput {
  protocol: Pick<Protocol, 'phases' | 'samplingIntervalS' | 'maxSampleGapS' | 'limits'>;
  phases: readonly PhaseRecord[];
  benchmarks: BenchmarkRecord;
  loopbackRowsHaveRails: boolean; // rows written before per-rail loopback carry no rail (rail 0 was measured)
  nodeNames: readonly string[];
  nodes: readonly NodeRecord[];
  ends: readonly CableEndRecord[];
  hasIdentityLine: boolean;
  timelines: ReadonlyMap<string, NodeTimeline>;
  // The rules version graded with (its setup rules and their variants), the limits it reads, the version the journal
  // was written under, and what the journal's load lines say of each soak (soak-evidence.ts).
  rules: readonly RuleDeclaration[];
  limits: Protocol['limits'];
  journalVersion: number;
  soakLoads: ReadonlyMap<string, SoakLoadEvidence>;
}

// A missing tick range of one node (both ends inclusive); explained when the run journaled why (a gap of the node
// opened there, or each tick skipped as unreadable). A writer never leaves a tick unexplained: sample lines are gone.
export interface TickGap {
  node: string;
  fromTick: number;
  toTick: number;
  explained: boolean;
}

export interface EvidenceResult {
  // Checks the live run stops on (loopback floor, NCCL rails, GPU load, identity): ERROR, as the live run would be.
  setup: Reason[];
  // The journal cannot support a verdict (a phase missing or cut short, samples not covering a phase): ERROR unless
  // the samples prove a FAIL.
  incomplete: Reason[];
  tickGaps: TickGap[];
  // The load each soak measured (rules versions with soak checks), and which checks a journal too old to carry their
  // data did not get.
  soakLoad: SoakLoadRecord | null;
  notes: string[];
}

// Every check the journal's evidence allows, made again.
export function checkEvidence(input: EvidenceInput): EvidenceResult {
  const tickGaps = tickGapsOf(input.timelines);
  const soaks = soakChecks(input);
  return {
    setup: [...setupChecks(input), ...soaks.reasons],
    incomplete: [...phaseChecks(input), ...coverageChecks(input), ...unexplainedTicks(tickGaps)],
    tickGaps,
    soakLoad: soaks.load,
    notes: soaks.notes,
  };
}

const done = (input: EvidenceInput, name: string) => input.phases.find((p) => p.name === name && p.status === 'done');

function missing(rule: string, message: string, extra: Partial<Reason> = {}): Reason {
  return {
    rule,
    message,
    advice: 'the journal does not hold what this verdict needs: qualify the cable again (cablequal grade never fills in what a journal lacks)',
    ...extra,
  };
}

// The live run's setup checks, from the journal's benchmark, node-info and identity lines.
function setupChecks(input: EvidenceInput): Reason[] {
  const out: Reason[] = [];
  const { protocol, benchmarks } = input;
  // A phase that ran is checked on what it left; a result missing counts only for a phase that ended done.
  for (const phase of protocol.phases) {
    const ran = input.phases.some((p) => p.name === phase.name);
    const isDone = done(input, phase.name) !== undefined;
    if (!ran) continue;
    if (phase.kind === 'identity' && (isDone || input.hasIdentityLine)) out.push(...identityChecks(input));
    if (phase.kind === 'loopback') {
      const floor = limitOf(protocol, 'loopback-floor').fail;
      if (benchmarks.loopback.length === 0) {
        if (isDone)
          out.push(
            missing('loopback-missing', `${phase.name}: the journal has no loopback result: a throttled NIC cannot be told from a bad cable`, {
              phase: phase.name,
            }),
          );
        continue;
      }
      for (const node of input.nodeNames) {
        const rows = benchmarks.loopback.filter((r) => r.node === node);
        const rails = input.loopbackRowsHaveRails ? railsOf(input.nodes.find((n) => n.name === node)) : [0];
        for (const rail of rails) {
          const row = rows.find((r) => r.rail === rail);
          if (!row)
            out.push(
              missing('loopback-missing', `${node} rail ${rail}: no loopback result in the journal: that rail was not shown fine`, {
                node,
                rail,
                phase: phase.name,
              }),
            );
          else if (!(row.gbps >= floor)) {
            out.push({
              rule: 'loopback-floor',
              node,
              rail,
              phase: phase.name,
              value: row.gbps,
              unit: 'Gb/s',
              limit: `loopback >= ${floor} Gb/s`,
              message: `${node} rail ${rail}: loopback ${formatNumber(row.gbps)} Gb/s < ${floor} Gb/s floor (from the journal's loopback result): the NIC is throttled, the cable was not tested`,
              advice:
                'reboot both nodes with the cable attached (sudo systemctl reboot --no-block); if it persists, power off for 60 s. The cable is not judged',
            });
          }
        }
      }
    }
    if (phase.kind === 'ib_write_bw' && isDone && !benchmarks.ibWriteBw) {
      out.push(missing('ib-write-bw-missing', `${phase.name}: the journal has no ib_write_bw result`, { phase: phase.name }));
    }
    if (phase.kind === 'nccl' && (isDone || benchmarks.nccl)) out.push(...ncclChecks(input, phase.name));
  }
  return out;
}

// The loads of each soak (link and GPU), by the checks the live run makes as the soak goes: over the whole soak for a
// soak that ended done, up to where it ended for one the run stopped (a setup error, a FAIL decided). A check whose
// data a journal written before it existed lacks is not applied (noted); a journal written under rules version 3 or
// later must carry it.
function soakChecks(input: EvidenceInput): { reasons: Reason[]; load: SoakLoadRecord | null; notes: string[] } {
  const reasons: Reason[] = [];
  const notes = new Set<string>();
  const gpuRule = input.rules.find((r) => r.id === 'gpu-util-min');
  const linkRule = input.rules.find((r) => r.id === 'soak-link-load');
  const load: SoakLoadRecord = { link: [], gpu: [] };
  const old = input.journalVersion < 3;
  for (const phase of input.protocol.phases) {
    if (phase.kind !== 'soak') continue;
    const p = input.phases.find((x) => x.name === phase.name);
    if (!p || p.endS === null) continue;
    const ev = input.soakLoads.get(phase.name) ?? emptyEvidence();
    const soak = { name: phase.name, startS: p.startS, durationS: phase.durationS, endS: ev.stoppedS !== null && ev.stoppedS <= p.endS ? ev.stoppedS : p.endS };
    const final = p.status === 'done';
    if (phase.gpuLoad && gpuRule) {
      const fresh = gpuRule.variant === 'after-load-start' && (ev.gpuStartS.size > 0 || !old);
      if (gpuRule.variant === 'after-load-start' && !fresh)
        notes.add(
          `gpu-util-min: the journal (rules version ${input.journalVersion}) does not say when the GPU load started: judged as version ${input.journalVersion} did, from a fixed point into each GPU-loaded soak`,
        );
      const gpu = checkGpuLoad({
        soak,
        final,
        nodes: input.nodeNames,
        utilisation: utilisationOf(input.timelines),
        starts: fresh ? ev.gpuStartS : null,
        exits: ev.exits,
        limit: limitOf({ limits: input.limits }, 'gpu-util-min'),
      });
      reasons.push(...gpu.reasons);
      if (fresh) load.gpu.push(...gpu.figures);
    }
    if (phase.linkLoad && linkRule) {
      if (old && ev.linkStartS === null && ev.reads.length === 0) {
        notes.add(
          `soak-link-load: not applied: the journal (rules version ${input.journalVersion}) was written before the soaks journaled their throughput rows`,
        );
        continue;
      }
      const link = checkLinkLoad({
        soak,
        final,
        evidence: ev,
        benchmark: input.benchmarks.ibWriteBw,
        limit: limitOf({ limits: input.limits }, 'soak-link-load'),
        exitGraceS: exitGraceS(input.protocol.samplingIntervalS),
      });
      reasons.push(...link.reasons);
      load.link.push(...link.loads);
    }
  }
  return { reasons, load: load.link.length || load.gpu.length ? load : null, notes: [...notes] };
}

// Each node's GPU utilisation per sample, from its timeline.
function utilisationOf(timelines: ReadonlyMap<string, NodeTimeline>): Map<string, { tS: number; pct: number | null }[]> {
  const out = new Map<string, { tS: number; pct: number | null }[]>();
  for (const [node, t] of timelines)
    out.set(
      node,
      t.tS.map((tS, i) => ({ tS, pct: t.gpuUtilPct[i] ?? null })),
    );
  return out;
}

// The rails of a node's cage (0 and 1 on a Spark; both when the node facts do not say).
function railsOf(node: NodeRecord | undefined): number[] {
  const rails: unknown = node?.cage?.rails;
  const n = Array.isArray(rails) ? rails.length : 0;
  return Array.from({ length: n > 0 && n <= 8 ? n : 2 }, (_, i) => i);
}

function identityChecks(input: EvidenceInput): Reason[] {
  if (!input.hasIdentityLine) return [missing('identity-missing', 'the journal has no identity line: which cable was tested is not recorded')];
  const out: Reason[] = [];
  for (const node of input.nodeNames) {
    const end = input.ends.find((e) => e.node === node);
    if (!end?.identity)
      out.push({
        rule: 'identity-read',
        node,
        message: `${node}: no EEPROM identity in the journal${end?.error ? ` (${end.error})` : ''}`,
        advice: 'reseat the cable and qualify it again',
      });
  }
  const serials = new Set(input.ends.filter((e) => e.identity).map((e) => e.identity!.vendorSn));
  if (serials.size > 1) {
    out.push({
      rule: 'identity-mismatch',
      message: `the two ends report different serials (${input.ends.map((e) => `${e.node}: ${e.identity?.vendorSn ?? '?'}`).join(', ')}): two different cables`,
      advice: 'connect both nodes with ONE cable, in the cages given with --nodes/--port',
    });
  }
  return out;
}

// The RDMA devices of a node's cabled cage, from its node facts.
function cageDevices(input: EvidenceInput, node: string | undefined): string[] {
  const rails: unknown = input.nodes.find((n) => n.name === node)?.cage?.rails;
  return Array.isArray(rails) ? rails.map((r: { rdmaDevice?: unknown } | null) => r?.rdmaDevice).filter((d): d is string => typeof d === 'string') : [];
}

function ncclChecks(input: EvidenceInput, phase: string): Reason[] {
  const nccl = input.benchmarks.nccl;
  if (!nccl) return [missing('nccl-missing', `${phase}: the journal has no NCCL result: both rails were not shown in use`, { phase })];
  // Each node's rank on its own (runs since per-node ranks); journals before it have one list, the first node's.
  const ranks =
    Array.isArray(nccl.ranks) && nccl.ranks.length ? nccl.ranks : [{ node: input.nodeNames[0] ?? '', network: nccl.network, devices: nccl.devices }];
  const off = ranks.find((r) => r?.network !== 'IB');
  if (nccl.network !== 'IB' || off) {
    const where =
      off && Array.isArray(nccl.ranks) ? `${off.node}'s rank used network ${off.network ?? 'unknown'}` : `NCCL used network ${nccl.network ?? 'unknown'}`;
    return [
      {
        rule: 'nccl-network',
        phase,
        message: `${where} instead of IB (from the journal's NCCL result)`,
        advice: 'check NCCL_IB_HCA and that the RDMA devices are Up; TCP fallback says nothing about the cable',
      },
    ];
  }
  const out: Reason[] = [];
  for (const rank of ranks) {
    const hcas = cageDevices(input, rank.node);
    if (hcas.length === 0) {
      out.push(
        missing('nccl-rails', `${phase}: the journal does not say which RDMA devices ${rank.node || 'the node'}'s cage has: NCCL's rails cannot be checked`, {
          phase,
        }),
      );
      continue;
    }
    const devices = Array.isArray(rank.devices) ? rank.devices : [];
    const absent = hcas.filter((h) => !devices.includes(h));
    if (absent.length === 0) continue;
    out.push({
      rule: 'nccl-rails',
      phase,
      ...(rank.node ? { node: rank.node } : {}),
      value: devices.join(',') || '(none)',
      message: `${rank.node ? `${rank.node}: ` : ''}NCCL used ${devices.length ? devices.join(', ') : 'no RDMA device'}; ${absent.join(', ')} unused (from the journal's NCCL result): only part of the link was tested`,
      advice: `set NCCL_IB_HCA=${hcas.join(',')} (both devices of the cabled port)`,
    });
  }
  return out;
}

// Every phase of the protocol started and ended in the journal, in order; a soak ran its whole duration.
function phaseChecks(input: EvidenceInput): Reason[] {
  const out: Reason[] = [];
  const seen = new Set<string>();
  for (const phase of input.protocol.phases) {
    const recs = input.phases.filter((p) => p.name === phase.name);
    seen.add(phase.name);
    const p = recs[0];
    if (!p) {
      out.push(missing('phase-missing', `phase ${phase.name} has no phase-start line in the journal: it is not shown to have run`, { phase: phase.name }));
      continue;
    }
    if (recs.length > 1) out.push(missing('phase-repeated', `phase ${phase.name} starts ${recs.length} times in the journal`, { phase: phase.name }));
    if (p.endS === null)
      out.push(missing('phase-unended', `phase ${phase.name} has no phase-end line in the journal: it is not shown to have finished`, { phase: phase.name }));
    else if (p.status !== 'done')
      out.push(
        missing('phase-not-done', `phase ${phase.name} ended ${p.status}${p.note ? ` (${p.note})` : ''}, and the journal records no reason for it`, {
          phase: phase.name,
        }),
      );
    else if (phase.kind === 'soak' && p.endS - p.startS < phase.durationS - input.protocol.samplingIntervalS) {
      out.push(
        missing('phase-short', `phase ${phase.name} lasted ${formatNumber(p.endS - p.startS)} s of its ${phase.durationS} s`, {
          phase: phase.name,
          value: p.endS - p.startS,
          unit: 's',
        }),
      );
    }
  }
  for (const p of input.phases)
    if (!seen.has(p.name)) out.push(missing('phase-unknown', `the journal has a phase ${p.name} the protocol does not have`, { phase: p.name }));
  // The phases in the protocol's order.
  const order = input.protocol.phases.map((ph) => input.phases.findIndex((p) => p.name === ph.name)).filter((i) => i >= 0);
  if (order.some((v, i) => i > 0 && v < order[i - 1]!)) out.push(missing('phase-order', "the phases in the journal are not in the protocol's order"));
  return out;
}

// From the end of identity (where sampling starts) every phase is covered by each node's samples: no stretch without
// a sample longer than the protocol's maxSampleGapS (one sampling interval of slack at the phase edges).
function coverageChecks(input: EvidenceInput): Reason[] {
  const out: Reason[] = [];
  const { protocol } = input;
  const identityAt = protocol.phases.findIndex((p) => p.kind === 'identity');
  const sampled = protocol.phases.slice(identityAt + 1);
  const allowS = protocol.maxSampleGapS + protocol.samplingIntervalS;
  for (const phase of sampled) {
    const p = input.phases.find((x) => x.name === phase.name);
    if (!p || p.endS === null || p.status === 'skipped') continue;
    for (const node of input.nodeNames) {
      const t = input.timelines.get(node);
      const inside = t ? t.tS.filter((s) => s >= p.startS - protocol.samplingIntervalS && s <= p.endS! + protocol.samplingIntervalS).sort((a, b) => a - b) : [];
      let worst = { s: 0, fromS: p.startS, toS: p.endS };
      let prev = p.startS;
      for (const s of [...inside, p.endS]) {
        const gap = s - prev;
        if (gap > worst.s) worst = { s: gap, fromS: prev, toS: s };
        prev = Math.max(prev, s);
      }
      const during = inside.filter((x) => x >= p.startS && x <= p.endS!).length;
      if (during === 0 && p.endS - p.startS > 2 * protocol.samplingIntervalS) {
        out.push(
          missing(
            'sampling-gap',
            `${node} ${phase.name}: not one sample in the journal during the phase (${formatNumber(p.startS)} s to ${formatNumber(p.endS)} s into the run): the phase is not covered by the samples`,
            {
              node,
              phase: phase.name,
              value: Number((p.endS - p.startS).toFixed(3)),
              unit: 's',
            },
          ),
        );
      } else if (worst.s > allowS) {
        out.push(
          missing(
            'sampling-gap',
            `${node} ${phase.name}: no sample from ${formatNumber(worst.fromS)} s to ${formatNumber(worst.toS)} s into the run (${formatNumber(worst.s)} s; the protocol allows ${protocol.maxSampleGapS} s): the phase is not covered by the samples`,
            {
              node,
              phase: phase.name,
              value: Number(worst.s.toFixed(3)),
              unit: 's',
              limit: `<= ${protocol.maxSampleGapS} s`,
            },
          ),
        );
      }
    }
  }
  return out;
}

// Ticks missing between a node's first and last sample (a node that did not answer, or sample lines left out).
function tickGapsOf(timelines: ReadonlyMap<string, NodeTimeline>): TickGap[] {
  const out: TickGap[] = [];
  for (const [node, t] of timelines) {
    const at = new Map<number, number>(); // tick -> tS of the node's sample
    t.ticks.forEach((k, i) => at.set(k, t.tS[i]!));
    const ticks = [...at.keys()].sort((a, b) => a - b);
    for (let i = 1; i < ticks.length; i++) {
      const from = ticks[i - 1]! + 1;
      const to = ticks[i]! - 1;
      if (to < from) continue;
      const [fromS, toS] = [at.get(ticks[i - 1]!)!, at.get(ticks[i]!)!];
      let skipped = true;
      for (let k = from; k <= to && skipped; k++) skipped = t.skippedTicks.has(k);
      const explained = skipped || t.gapStartsS.some((g) => g >= fromS && g <= toS);
      out.push({ node, fromTick: from, toTick: to, explained });
    }
  }
  return out;
}

// Missing ticks the run never journaled a reason for: sample lines were deleted or lost, the journal is not whole.
function unexplainedTicks(gaps: readonly TickGap[]): Reason[] {
  const bad = gaps.filter((g) => !g.explained);
  if (!bad.length) return [];
  const say = (g: TickGap) => `${g.node} tick${g.fromTick === g.toTick ? ` ${g.fromTick}` : `s ${g.fromTick}-${g.toTick}`}`;
  return [
    missing(
      'samples-missing',
      `${bad.slice(0, 5).map(say).join(', ')}${bad.length > 5 ? ` and ${bad.length - 5} more range(s)` : ''}: no sample line in the journal and no gap or skipped tick recorded for it: sample lines were deleted or lost`,
      {
        node: bad[0]!.node,
        value: bad.reduce((n, g) => n + g.toTick - g.fromTick + 1, 0),
        unit: 'ticks',
      },
    ),
  ];
}
