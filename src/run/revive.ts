import type { NodeSample, RailSample } from '../domain/sample.js';

function toBig(v: unknown): bigint | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (typeof v === 'string' && /^\d+$/.test(v)) return BigInt(v);
  return undefined;
}

// Journal JSON keeps u64 counters as numbers or decimal strings; turn them back into bigints.
export function reviveSample(raw: unknown): NodeSample {
  const s = raw as NodeSample & { rails: (RailSample & { counters: Record<string, unknown> })[] };
  return {
    ...s,
    rails: s.rails.map((r) => {
      const counters: Record<string, bigint> = {};
      for (const [k, v] of Object.entries(r.counters)) {
        const b = toBig(v);
        if (b !== undefined) counters[k] = b;
      }
      const fec = r.fec
        ? {
            active: r.fec.active,
            ...(toBig(r.fec.correctedBlocks) !== undefined ? { correctedBlocks: toBig(r.fec.correctedBlocks)! } : {}),
            ...(toBig(r.fec.uncorrectableBlocks) !== undefined ? { uncorrectableBlocks: toBig(r.fec.uncorrectableBlocks)! } : {}),
            ...(toBig(r.fec.correctedBits) !== undefined ? { correctedBits: toBig(r.fec.correctedBits)! } : {}),
          }
        : r.fec;
      return { ...r, counters, fec };
    }),
  };
}
