import type { U64 } from './u64.js';

// The counters and readings of one rail's netdev at one moment, as parsed from ethtool.
export interface RailSample {
  netdev: string;
  counters: Record<string, U64>; // ethtool -S, all counters kept exact
  linkUp?: boolean;
  speedMbps?: number | null;
  lanes?: number | null;
  fec?: { active: string; correctedBlocks?: U64; uncorrectableBlocks?: U64; correctedBits?: U64 } | null;
}

// GPU telemetry from nvidia-smi (null where the GPU reports [N/A]).
export interface GpuSample {
  utilizationPct: number | null;
  temperatureC: number | null;
  powerW: number | null;
}

// One node's sample set at one tick: the unit the sampler delivers and the journal stores.
export interface NodeSample {
  node: string;
  tick: number;
  tMs: number; // node's own clock (epoch ms), from the same round trip
  controllerMs: number; // controller clock when the answer arrived
  rails: RailSample[];
  nicTempC: number | null;
  gpus: GpuSample[];
  // Registered extra readings (src/probes/readings.ts) read this tick: id -> value, null when unreadable.
  readings?: Record<string, number | null>;
  errors: string[]; // parse or command problems in this tick (tick kept, values missing)
}
