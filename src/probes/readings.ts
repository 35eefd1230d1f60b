// Every reading the sampler takes on a node, each declared once: its id, the command it runs on the node (given the
// node's cabled cage), its pure parser and its period. The six the grading is built on (CORE_READINGS) land in their
// own typed NodeSample fields; every other one (READINGS) is a gauge that lands in NodeSample.readings[id]. From an
// entry alone a reading is asked in every tick's batch (src/sampling/sample-set.ts), journaled with the sample, and an
// extra one is summarised per node and phase by the analysis (min, mean, max), written as a timeseries.csv column,
// printed on the certificate and understood by `cablequal parse <id>`; the simulated lab answers it by its id
// (src/sim/readings.ts) or runs its command like a node. How to add one: docs/adding-a-probe.md.
import type { GpuSample } from '../domain/sample.js';
import { cmd } from '../transport/commands.js';
import { parseEthtoolFec, type EthtoolFec } from './ethtool-fec.js';
import { parseEthtoolLink, type EthtoolLink } from './ethtool-link.js';
import { parseEthtoolStats, type EthtoolStats } from './ethtool-stats.js';
import { parseHwmon } from './nic-temp.js';
import { parseNodeTime } from './node-time.js';
import { parseNvidiaSmi } from './nvidia-smi.js';

// Where a reading is asked: the netdevs of the node's cabled cage (one per PCIe function; the first is the canonical
// one), and the netdev this item reads (the rail itself for a per-rail reading, else the canonical one).
export interface ReadingContext {
  netdev: string;
  rails: readonly string[];
}

// One reading of a node: what it runs, how its answer is read, how often.
export interface ReadingProbe<T = number | null> {
  // Lower-case words joined by '-'; an extra reading's ends in its unit (`module-temp-c`): tick-script item
  // `reading:<id>`, key in NodeSample.readings, the timeseries.csv column (with '_' for '-') and the certificate's name
  // for it, so the journal and every output say the unit without this registry.
  id: string;
  describe: string; // what it is, one line (CSV column doc, certificate, `cablequal parse`)
  periodS: number; // read on ticks this many seconds apart (at least every tick; 0: every tick)
  command: (at: ReadingContext) => string; // what the node runs; its stdout is untrusted input
  parse: (text: string) => T; // pure; throws a ParseError on text it cannot read
}

// The nvidia-smi fields cmd.nvidiaSmi() queries, in its order (the output has no header).
const GPU_FIELDS = ['index', 'name', 'utilization.gpu', 'temperature.gpu', 'power.draw'];

const numberOrNull = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);

// The NIC temperature of a hwmon answer: the hottest mlx5 sensor, null when the node has none.
function nicTempOf(text: string): number | null {
  return parseHwmon(text).nicMaxC;
}

// Each GPU's utilisation, temperature and power of a headerless nvidia-smi query (null where it says [N/A]).
function gpusOf(text: string): GpuSample[] {
  return parseNvidiaSmi(text, GPU_FIELDS).gpus.map((g) => ({
    utilizationPct: numberOrNull(g['utilization.gpu']),
    temperatureC: numberOrNull(g['temperature.gpu']),
    powerW: numberOrNull(g['power.draw']),
  }));
}

// The six readings the grading is built on, with their tick-script items (`time`, `stats:<netdev>` and
// `link:<netdev>` for every rail, `fec:<netdev>` for one, `hwmon`, `gpu`) and typed NodeSample fields. Periods: node
// time and the *_phy counters every tick (the grading's rates); FEC block counters every second (cumulative: a
// skipped tick loses no count); link settings every 10 s (a drop shows at once in link_down_events_phy); NIC and GPU
// temperatures and GPU load every 5 s (gauges that move over minutes; nvidia-smi alone costs tens of ms).
export const CORE_READINGS = {
  time: { id: 'time', describe: "the node's clock ($EPOCHREALTIME)", periodS: 0, command: () => cmd.nodeTime(), parse: parseNodeTime },
  stats: {
    id: 'stats',
    describe: 'the *_phy counters of each rail (ethtool -S through the persistent filter)',
    periodS: 0,
    command: (at: ReadingContext) => cmd.ethtoolStatsPhy(at.netdev),
    parse: parseEthtoolStats,
  },
  link: {
    id: 'link',
    describe: 'link state, speed and lanes of each rail',
    periodS: 10,
    command: (at: ReadingContext) => cmd.ethtoolLink(at.netdev),
    parse: parseEthtoolLink,
  },
  fec: {
    id: 'fec',
    describe: 'FEC mode and block counters of one rail',
    periodS: 1,
    command: (at: ReadingContext) => cmd.ethtoolFec(at.netdev),
    parse: parseEthtoolFec,
  },
  hwmon: { id: 'hwmon', describe: 'the NIC temperature (hwmon)', periodS: 5, command: () => cmd.hwmon(), parse: nicTempOf },
  gpu: { id: 'gpu', describe: 'GPU utilisation, temperature and power (nvidia-smi)', periodS: 5, command: () => cmd.nvidiaSmi(), parse: gpusOf },
} as const satisfies {
  time: ReadingProbe<number>;
  stats: ReadingProbe<EthtoolStats>;
  link: ReadingProbe<EthtoolLink>;
  fec: ReadingProbe<EthtoolFec>;
  hwmon: ReadingProbe<number | null>;
  gpu: ReadingProbe<GpuSample[]>;
};

// The extra readings every run takes, in column order. A new one is an entry here (and its parser beside it).
const READINGS: ReadingProbe[] = [];

const ID = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

// The registered extra readings (register through registerReading()).
export function readings(): readonly ReadingProbe[] {
  return READINGS;
}

// Check an extra reading's entry: its id's form, not a core reading's, and a period.
export function checkReading(r: ReadingProbe, registered: readonly ReadingProbe[]): void {
  if (!ID.test(r.id)) throw new Error(`reading id ${JSON.stringify(r.id)}: expected lower-case words joined by '-'`);
  if (r.id in CORE_READINGS || registered.some((x) => x.id === r.id)) throw new Error(`reading ${r.id} is already registered`);
  if (!(r.periodS > 0)) throw new Error(`reading ${r.id}: period ${r.periodS} s, expected > 0`);
}

READINGS.forEach((r, i) => checkReading(r, READINGS.slice(0, i)));

/** Add a reading; returns the function that removes it again (tests register theirs for one run). @internal */
export function registerReading(r: ReadingProbe): () => void {
  checkReading(r, READINGS);
  READINGS.push(r);
  return () => {
    const i = READINGS.indexOf(r);
    if (i >= 0) READINGS.splice(i, 1);
  };
}
