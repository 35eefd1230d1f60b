import type { U64 } from './u64.js';

// The *_phy counters of one rail that cablequal reads, typed from the parser on: one field per counter. Their
// `ethtool -S` names are said once, in PHY_COUNTERS (the parser reads them by it, the journal codec writes them by it).
export interface PhyCounters {
  rxPackets?: U64; // rx_packets_phy
  crcErrors?: U64; // rx_crc_errors_phy
  txBytes?: U64; // tx_bytes_phy
  rxBytes?: U64; // rx_bytes_phy (a decrease is a reset: the node rebooted or the counters were cleared)
  rxBits?: U64; // rx_bits_phy (only on 2026+ kernels)
  symbolErrors?: U64; // rx_symbol_err_phy
  rxDiscards?: U64; // rx_discards_phy
  linkDownEvents?: U64; // link_down_events_phy
  pcsSymbolErrors?: U64; // rx_pcs_symbol_err_phy (post-FEC)
  correctedBits?: U64; // rx_corrected_bits_phy
  // total_success_recovery_phy: successful PHY recovery cycles of the port's reset cycle, a recovery without a link drop
  // (mlx5 since the 2025-03 patch "net/mlx5e: Expose port reset cycle recovery counter via ethtool", when the firmware
  // has the PPCNT recovery group; a 32-bit register). Absent on older kernels.
  recoveries?: U64;
  laneErrors: U64[]; // rx_err_lane_0_phy.. in lane order (pre-FEC raw errors); empty when the driver lacks them
}

// A scalar field of PhyCounters.
export type PhyCounterField = Exclude<keyof PhyCounters, 'laneErrors'>;

// Each scalar field's `ethtool -S` name, in the order mlx5 prints them (the lanes follow rx_corrected_bits_phy, and
// total_success_recovery_phy follows the lanes).
export const PHY_COUNTERS: readonly (readonly [PhyCounterField, string])[] = [
  ['rxPackets', 'rx_packets_phy'],
  ['crcErrors', 'rx_crc_errors_phy'],
  ['txBytes', 'tx_bytes_phy'],
  ['rxBytes', 'rx_bytes_phy'],
  ['rxBits', 'rx_bits_phy'],
  ['symbolErrors', 'rx_symbol_err_phy'],
  ['rxDiscards', 'rx_discards_phy'],
  ['linkDownEvents', 'link_down_events_phy'],
  ['pcsSymbolErrors', 'rx_pcs_symbol_err_phy'],
  ['correctedBits', 'rx_corrected_bits_phy'],
  ['recoveries', 'total_success_recovery_phy'],
];

// The `ethtool -S` name of lane N's pre-FEC error counter.
export const laneCounterName = (lane: number): string => `rx_err_lane_${lane}_phy`;

// The typed counters among `ethtool -S` names (a parse, or a journal's map); lanes from 0 up to the first one missing.
export function phyFromNames(get: (name: string) => U64 | undefined): PhyCounters {
  const phy: PhyCounters = { laneErrors: [] };
  for (const [field, name] of PHY_COUNTERS) {
    const v = get(name);
    if (v !== undefined) phy[field] = v;
  }
  for (let i = 0; ; i++) {
    const v = get(laneCounterName(i));
    if (v === undefined) break;
    phy.laneErrors.push(v);
  }
  return phy;
}

// The counters by their `ethtool -S` names, in the driver's order (what the journal writes).
export function phyToNames(phy: PhyCounters): [string, U64][] {
  const out: [string, U64][] = [];
  for (const [field, name] of PHY_COUNTERS) if (phy[field] !== undefined) out.push([name, phy[field]]);
  phy.laneErrors.forEach((v, i) => out.push([laneCounterName(i), v]));
  return out;
}

// No counter at all (a tick whose `ethtool -S` failed).
export function phyIsEmpty(phy: PhyCounters): boolean {
  return phy.laneErrors.length === 0 && PHY_COUNTERS.every(([field]) => phy[field] === undefined);
}

// The counters of one rail's netdev and its other readings at one moment, as parsed from ethtool.
export interface RailSample {
  netdev: string;
  phy: PhyCounters; // ethtool -S, the *_phy counters cablequal reads, exact
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
