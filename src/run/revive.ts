import type { NodeSample, RailSample } from '../domain/sample.js';

function toBig(v: unknown): bigint | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}

type RawRail = Omit<RailSample, 'counters'> & { counters?: Record<string, unknown>; countersFrom?: string };

function reviveCounters(raw: Record<string, unknown> | undefined, into: Record<string, bigint>): Record<string, bigint> {
  if (raw) {
    for (const k in raw) {
      if (!Object.hasOwn(raw, k)) continue;
      const b = toBig(raw[k]);
      if (b !== undefined) into[k] = b;
    }
  }
  return into;
}

// Journal JSON keeps u64 counters as numbers or decimal strings; turn them back into bigints. A rail written
// in the compact form (`countersFrom`: another rail's netdev, `counters`: only what differs from it) gets the
// other rail's counters with its own on top. `onlyNetdev`: revive that rail's counters only (others get {}).
export function reviveSample(raw: unknown, onlyNetdev?: string): NodeSample {
  const s = raw as Omit<NodeSample, 'rails'> & { rails: RawRail[] };
  const byNetdev = new Map<string, Record<string, bigint>>();
  const rails = s.rails.map((r) => {
    const wanted = onlyNetdev === undefined || r.netdev === onlyNetdev;
    let counters: Record<string, bigint> = {};
    if (wanted) {
      if (r.countersFrom !== undefined) {
        const base = byNetdev.get(r.countersFrom) ?? reviveCounters(s.rails.find((x) => x.netdev === r.countersFrom)?.counters, {});
        counters = { ...base };
      }
      reviveCounters(r.counters, counters);
      byNetdev.set(r.netdev, counters);
    }
    const fec = r.fec
      ? {
          active: r.fec.active,
          ...(toBig(r.fec.correctedBlocks) !== undefined ? { correctedBlocks: toBig(r.fec.correctedBlocks)! } : {}),
          ...(toBig(r.fec.uncorrectableBlocks) !== undefined ? { uncorrectableBlocks: toBig(r.fec.uncorrectableBlocks)! } : {}),
          ...(toBig(r.fec.correctedBits) !== undefined ? { correctedBits: toBig(r.fec.correctedBits)! } : {}),
        }
      : r.fec;
    const { countersFrom: _from, ...rest } = r;
    return { ...rest, counters, fec };
  });
  return { ...s, rails };
}
