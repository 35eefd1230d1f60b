// Labels a journal states that the record derives instead of trusting (issue #32 item 1b): anyone can edit a line and
// recompute the hash chain, so a label that decides a verdict is read from the evidence the journal holds beside it.
// - a sample's phase: from the phase timeline (phase-start lines in journal order), not the sample's own `phase`;
//   where they disagree the timeline wins (a note says how many and the first line), so a sample relabelled soak ->
//   nccl is graded as the soak sample it is;
// - the cable's identity: the identity line's ends must decode from the raw EEPROM dumps (`eeprom-lower:` and
//   `eeprom-upper:` raw lines) the run journaled just before it; an end that does not is a journal-identity ERROR;
// - "simulated": from the simulator's own marks (its DMI sys_vendor in the raw `dmi` lines, its scenario and clock in
//   run-start), not from the `simulated` flags alone.
import type { CableEndRecord } from '../domain/record.js';
import type { Reason } from '../domain/outcome.js';
import { ParseError } from '../domain/errors.js';
import { parseDmi } from '../probes/dmi.js';
import { parseEepromHex } from '../probes/eeprom-hex.js';
import type { JournalContents, JournalLine } from './journal.js';

const ADVICE = 'use the journal as the run wrote it (a backup or the lab archive), or qualify the cable again';
const lineOf = (contents: JournalContents, i: number) => contents.lineNos?.[i] ?? i + 1;

// The phase each sample line is graded under (index of the line -> phase), and the lines whose own label disagreed.
export interface DerivedPhases {
  phaseOf: Map<number, string>;
  relabelled: { line: number; stated: string; derived: string }[];
}

// The sampler labels a tick with the phase open when the tick began (src/run/sampling-loop.ts), and a tick begins
// only after the previous tick's sample lines are written: a node's sample may carry any phase that was open since
// its previous sample line (the tick in flight at a phase boundary lands after the next phase-start still carrying
// the phase before; a node's first sample, any phase since the run started). A label outside that set is replaced by
// the phase of the latest phase-start before the line.
export function derivePhases(contents: JournalContents): DerivedPhases {
  const phaseOf = new Map<number, string>();
  const relabelled: DerivedPhases['relabelled'] = [];
  const since = new Map<string, Set<string>>(); // node -> the phases open since its previous sample line
  const sinceStart = new Set<string>();
  let current: string | null = null;
  contents.lines.forEach((l, i) => {
    if (l.type === 'phase-start' && typeof l['phase'] === 'string') {
      current = l['phase'];
      sinceStart.add(current);
      for (const s of since.values()) s.add(current);
      return;
    }
    if (l.type !== 'sample') return;
    const stated = String(l['phase']);
    const node = String((l['sample'] as { node?: unknown } | undefined)?.node);
    const allowed = since.get(node) ?? sinceStart;
    const derived = current === null || allowed.has(stated) ? stated : current;
    since.set(node, new Set(current === null ? [] : [current]));
    phaseOf.set(i, derived);
    if (derived !== stated) relabelled.push({ line: lineOf(contents, i), stated, derived });
  });
  return { phaseOf, relabelled };
}

// The record's note when the timeline overrode sample labels.
export function relabelNote(d: DerivedPhases): string | null {
  const first = d.relabelled[0];
  if (!first) return null;
  return `${d.relabelled.length} sample line(s) state a phase the journal's phase timeline does not place them in (first: line ${first.line} says "${first.stated}", the timeline "${first.derived}"): graded under the timeline's phase`;
}

// Each identity end against the EEPROM bytes journaled for it: the fields the identity line states must be what the
// raw dumps decode to (fields a later decoder added, absent from an old journal's line, are not compared).
export function identityProblems(contents: JournalContents): Reason[] {
  const raws = new Map<string, JournalLine>();
  const out: Reason[] = [];
  contents.lines.forEach((l, i) => {
    if (l.type === 'raw' && typeof l['node'] === 'string' && typeof l['what'] === 'string' && /^eeprom-(lower|upper):/.test(l['what']))
      raws.set(`${l['node']}|${l['what']}`, l);
    if (l.type !== 'identity' || out.length) return;
    for (const end of (l['ends'] as CableEndRecord[] | undefined) ?? []) {
      if (!end.identity) continue;
      const problem = endProblem(end, raws);
      if (problem)
        out.push({
          rule: 'journal-identity',
          node: end.node,
          value: String(end.identity.vendorSn),
          message: `journal line ${lineOf(contents, i)} (identity): ${end.node}'s end ${problem}: the identity in the journal is not the cable the run read; the journal cannot support a verdict`,
          advice: ADVICE,
        });
    }
  });
  return out;
}

function endProblem(end: CableEndRecord, raws: Map<string, JournalLine>): string | null {
  const lower = raws.get(`${end.node}|eeprom-lower:${end.netdev}`);
  const upper = raws.get(`${end.node}|eeprom-upper:${end.netdev}`);
  if (!lower || !upper || typeof lower['stdout'] !== 'string' || typeof upper['stdout'] !== 'string')
    return `states serial ${JSON.stringify(end.identity!.vendorSn)} but the journal holds no raw EEPROM dump of ${end.netdev} to read it from`;
  let decoded: Record<string, unknown>;
  try {
    decoded = parseEepromHex(`${lower['stdout']}\n${upper['stdout']}`) as unknown as Record<string, unknown>;
  } catch (e) {
    if (!(e instanceof ParseError)) throw e;
    return `states serial ${JSON.stringify(end.identity!.vendorSn)} but its raw EEPROM dump does not decode (${e.message})`;
  }
  const stated = end.identity as unknown as Record<string, unknown>;
  // The serial first (what a certificate is about), then every other field the line states.
  for (const k of ['vendorSn', ...Object.keys(stated).filter((x) => x !== 'vendorSn')]) {
    if (!(k in decoded) || JSON.stringify(decoded[k]) === JSON.stringify(stated[k])) continue;
    return `states ${k} ${JSON.stringify(stated[k])}, but the raw EEPROM bytes it was read from say ${JSON.stringify(decoded[k])}`;
  }
  return null;
}

// Whether the run was on the simulated lab, from the simulator's own marks: a node whose raw DMI strings are the
// simulated lab's, a scenario or the lab's clock recorded at run-start, or the flags the run wrote.
export function simulatedOf(lines: readonly JournalLine[], flagged: boolean): boolean {
  if (flagged) return true;
  const start = lines.find((l) => l.type === 'run-start');
  if (start && ((typeof start['scenario'] === 'string' && start['scenario'] !== '') || typeof start['clockStartedAt'] === 'string')) return true;
  return lines.some((l) => {
    if (l.type !== 'raw' || l['what'] !== 'dmi' || typeof l['stdout'] !== 'string') return false;
    try {
      return parseDmi(l['stdout']).simulated;
    } catch {
      return false;
    }
  });
}
