// The journal's sample codec, both ways in one place: a NodeSample (typed counters, u64 as bigint) to the JSON its
// `sample` line holds, and that JSON back, for every form a journal has held. The counters travel by their `ethtool -S`
// names (domain/sample.ts PHY_COUNTERS), u64 as a number up to 2^53 and a decimal string above. The netdevs of one cage
// usually read the same *_phy counters, so a later rail whose counters include every one of the first rail's is written
// as `countersFrom: <first netdev>` plus only the counters that differ.
import { phyFromNames, phyToNames, type NodeSample, type PhyCounters, type RailSample } from '../domain/sample.js';
import { u64ToJson, type U64 } from '../domain/u64.js';

type JsonCounters = Record<string, number | string>;

function jsonCounters(entries: readonly [string, U64][]): JsonCounters {
  const out: JsonCounters = {};
  for (const [k, v] of entries) out[k] = u64ToJson(v);
  return out;
}

function jsonFec(fec: NonNullable<RailSample['fec']>): Record<string, unknown> {
  return {
    active: fec.active,
    ...(fec.correctedBlocks !== undefined ? { correctedBlocks: u64ToJson(fec.correctedBlocks) } : {}),
    ...(fec.uncorrectableBlocks !== undefined ? { uncorrectableBlocks: u64ToJson(fec.uncorrectableBlocks) } : {}),
    ...(fec.correctedBits !== undefined ? { correctedBits: u64ToJson(fec.correctedBits) } : {}),
  };
}

// A sample as its journal line holds it: JSON-safe, and compact (see above) unless `full` (every rail's own counters:
// the evidence a skipped tick keeps).
export function encodeSample(s: NodeSample, full = false): Record<string, unknown> {
  const first = s.rails[0];
  const firstNames = first ? phyToNames(first.phy) : [];
  const rails = s.rails.map((r, i) => {
    const { netdev, phy, fec, ...rest } = r;
    const names = i === 0 ? firstNames : phyToNames(phy);
    const tail = fec ? { fec: jsonFec(fec) } : {};
    if (!full && i > 0 && first!.netdev !== netdev && firstNames.length > 0) {
      const own = new Map(names);
      if (firstNames.every(([k]) => own.has(k))) {
        const base = new Map(firstNames);
        const diff = names.filter(([k, v]) => base.get(k) !== v);
        return { netdev, countersFrom: first!.netdev, counters: jsonCounters(diff), ...rest, ...tail };
      }
    }
    return { netdev, counters: jsonCounters(names), ...rest, ...tail };
  });
  return { ...s, rails };
}

// A u64 as the journal holds it (a whole number, or a decimal string); undefined for anything else.
function toBig(v: unknown): bigint | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}

type RawRail = Omit<RailSample, 'phy' | 'fec'> & { counters?: Record<string, unknown>; countersFrom?: string; fec?: Record<string, unknown> | null };

// A journal rail's counters by name (own properties only: a line is untrusted).
function namedOf(raw: Record<string, unknown> | undefined, into: Map<string, bigint>): Map<string, bigint> {
  if (raw && typeof raw === 'object') {
    for (const k in raw) {
      if (!Object.hasOwn(raw, k)) continue;
      const b = toBig(raw[k]);
      if (b !== undefined) into.set(k, b);
    }
  }
  return into;
}

function fecOf(raw: Record<string, unknown>): NonNullable<RailSample['fec']> {
  const fec: NonNullable<RailSample['fec']> = { active: raw['active'] as string };
  const blocks = toBig(raw['correctedBlocks']);
  const uncorrectable = toBig(raw['uncorrectableBlocks']);
  const bits = toBig(raw['correctedBits']);
  if (blocks !== undefined) fec.correctedBlocks = blocks;
  if (uncorrectable !== undefined) fec.uncorrectableBlocks = uncorrectable;
  if (bits !== undefined) fec.correctedBits = bits;
  return fec;
}

const NO_COUNTERS = (): PhyCounters => ({ laneErrors: [] });

// Whether a journal rail writes no counter of its own.
function noneOwn(counters: Record<string, unknown> | undefined): boolean {
  for (const k in counters ?? {}) if (Object.hasOwn(counters!, k)) return false;
  return true;
}

// A journal line's sample back as a NodeSample: counters typed again, a compact rail (`countersFrom`) given the other
// rail's counters with its own on top (the very same counters when it differs in none, as the sampler shares one parse
// of the same text). `onlyNetdev`: decode that rail's counters only (the others get none).
export function decodeSample(raw: unknown, onlyNetdev?: string): NodeSample {
  const s = raw as Omit<NodeSample, 'rails'> & { rails: RawRail[] };
  const byNetdev = new Map<string, Map<string, bigint>>();
  const phyOf = new Map<string, PhyCounters>();
  const rails = s.rails.map((r): RailSample => {
    let phy = NO_COUNTERS();
    const same = r.countersFrom !== undefined && noneOwn(r.counters) ? phyOf.get(r.countersFrom) : undefined;
    if (same && (onlyNetdev === undefined || r.netdev === onlyNetdev)) {
      phy = same;
      phyOf.set(r.netdev, same);
      byNetdev.set(r.netdev, byNetdev.get(r.countersFrom!)!);
    } else if (onlyNetdev === undefined || r.netdev === onlyNetdev) {
      const named = new Map<string, bigint>();
      if (r.countersFrom !== undefined) {
        const base = byNetdev.get(r.countersFrom) ?? namedOf(s.rails.find((x) => x.netdev === r.countersFrom)?.counters, new Map());
        for (const [k, v] of base) named.set(k, v);
      }
      namedOf(r.counters, named);
      byNetdev.set(r.netdev, named);
      phy = phyFromNames((name) => named.get(name));
      phyOf.set(r.netdev, phy);
    }
    const { countersFrom: _from, counters: _counters, fec, ...rest } = r;
    return { ...rest, phy, ...(fec !== undefined ? { fec: fec ? fecOf(fec) : fec } : {}) } as RailSample;
  });
  return { ...s, rails };
}
