// What one node is asked at each tick, as one tick script, and how the answer becomes a NodeSample.
// Pure: no I/O and no clock, so the simulated lab and the tests can drive it with any text.
import { UsageError } from '../domain/errors.js';
import type { NodeSample, RailSample } from '../domain/sample.js';
import type { ScriptItem, ScriptItemOutput } from '../transport/tick-script.js';
import { cmd } from '../transport/commands.js';
import type { EthtoolStats } from '../probes/ethtool-stats.js';
import { CORE_READINGS, readings as registeredReadings, type ReadingContext, type ReadingProbe } from '../probes/readings.js';

const readingProbe = (id: string): ReadingProbe | undefined => registeredReadings().find((r) => r.id === id);

// Which readings a node's sample set holds; link state and FEC can be read less often than counters.
export interface SampleSetConfig {
  // Netdevs whose `ethtool -S` is read every tick: both rails of the cabled cage.
  rails: string[];
  // Netdev for `ethtool -I --show-fec` (one per cable is enough); default rails[0], null = never.
  fecNetdev?: string | null;
  // `ethtool <if>` of every rail on ticks where tick % N === 0; default 1 (every tick), 0 = never.
  linkEveryTicks?: number;
  // Same for the FEC item; default 1.
  fecEveryTicks?: number;
  // Read every `ethtool -S` counter each tick instead of only the *_phy ones (default false: a ~50x smaller answer).
  fullStats?: boolean;
  hwmon?: boolean; // NIC temperature from hwmon; default true
  gpu?: boolean; // nvidia-smi telemetry; default true
  // Temperatures and GPU telemetry are gauges that move over minutes: read them on ticks where tick % N === 0 (default 1).
  hwmonEveryTicks?: number;
  gpuEveryTicks?: number;
  // Registered extra readings (src/probes/readings.ts) to take: id -> every N ticks.
  readings?: Record<string, number>;
}

// A parsed tick of one node plus the text of every item, so a failed item can be journaled as it was received.
export interface SampleSetResult {
  sample: NodeSample;
  raw: Record<string, string>;
}

const every = (n: number | undefined, tick: number) => {
  const k = n ?? 1;
  if (!Number.isInteger(k) || k < 0) throw new UsageError(`refusing sampling period ${k}: expected a whole number of ticks >= 0`);
  return k > 0 && tick % k === 0;
};

// Check a config once, at the edge: names are validated again by the command builders.
export function validateSampleSet(config: SampleSetConfig): void {
  if (config.rails.length === 0) throw new UsageError('sample set: at least one rail netdev is needed');
  if (new Set(config.rails).size !== config.rails.length) throw new UsageError(`sample set: duplicate netdev in ${config.rails.join(', ')}`);
  const fec = config.fecNetdev === undefined ? config.rails[0] : config.fecNetdev;
  if (fec !== null && fec !== undefined && !config.rails.includes(fec)) {
    throw new UsageError(`sample set: FEC netdev ${fec} is not one of the rails (${config.rails.join(', ')})`);
  }
  every(config.linkEveryTicks, 0);
  every(config.fecEveryTicks, 0);
  every(config.hwmonEveryTicks, 0);
  every(config.gpuEveryTicks, 0);
  for (const [id, n] of Object.entries(config.readings ?? {})) {
    if (!readingProbe(id)) throw new UsageError(`sample set: no reading ${id} is registered`);
    every(n, 0);
  }
  config.rails.forEach((r) => cmd.ethtoolStats(r));
}

// The tick script items of one tick; node time first so it is read as close to the request as possible. `oneShot`: each
// item runs in a shell of its own (the naive way), where the persistent *_phy filter would start and die per item.
export function sampleSetItems(config: SampleSetConfig, tick: number, opts: { oneShot?: boolean } = {}): ScriptItem[] {
  const C = CORE_READINGS;
  const at = (netdev: string): ReadingContext => ({ netdev, rails: config.rails });
  const node = at(config.rails[0]!);
  const items: ScriptItem[] = [{ id: C.time.id, command: C.time.command() }];
  // The counters' command in the two other forms a caller may ask for: the whole dump, or the naive one-shot grep.
  const stats = (r: string) => (config.fullStats ? cmd.ethtoolStats(r) : opts.oneShot ? cmd.ethtoolStatsPhyGrep(r) : C.stats.command(at(r)));
  for (const r of config.rails) items.push({ id: `${C.stats.id}:${r}`, command: stats(r) });
  if (every(config.linkEveryTicks, tick)) {
    for (const r of config.rails) items.push({ id: `${C.link.id}:${r}`, command: C.link.command(at(r)) });
  }
  const fec = config.fecNetdev === undefined ? config.rails[0] : config.fecNetdev;
  if (fec && every(config.fecEveryTicks, tick)) items.push({ id: `${C.fec.id}:${fec}`, command: C.fec.command(at(fec)) });
  if ((config.hwmon ?? true) && every(config.hwmonEveryTicks, tick)) items.push({ id: C.hwmon.id, command: C.hwmon.command() });
  if ((config.gpu ?? true) && every(config.gpuEveryTicks, tick)) items.push({ id: C.gpu.id, command: C.gpu.command() });
  for (const [id, n] of Object.entries(config.readings ?? {})) {
    const r = readingProbe(id);
    if (r && every(n, tick)) items.push({ id: `reading:${id}`, command: r.command(node) });
  }
  return items;
}

// One node's tick script answer for one tick, with the items that were asked.
export interface AssembleInput {
  node: string;
  tick: number;
  controllerMs: number;
  items: ScriptItem[];
  outputs: ScriptItemOutput[];
}

// Turn one tick script answer into a NodeSample. Every failed or unparsable item becomes one `errors` line
// (`<item id>: <reason>`) and its value stays missing (tMs NaN, temperature null, no counters) — never zero.
export function assembleSample(input: AssembleInput): SampleSetResult {
  const C = CORE_READINGS;
  const errors: string[] = [];
  const raw: Record<string, string> = {};
  const byId = new Map(input.outputs.map((o) => [o.id, o]));

  // Parse one item; undefined when it was not asked, missing or unparsable (then an error line is recorded).
  const read = <T>(id: string, parse: (text: string) => T): T | undefined => {
    if (!input.items.some((i) => i.id === id)) return undefined;
    const out = byId.get(id);
    if (!out) {
      errors.push(`${id}: no output for this item`);
      return undefined;
    }
    raw[id] = out.stdout;
    if (out.exitCode === -1) {
      errors.push(`${id}: output cut off (no exit status)`);
      return undefined;
    }
    try {
      return parse(out.stdout);
    } catch (e) {
      const why = e instanceof Error ? e.message : String(e);
      errors.push(`${id}: ${why}${out.exitCode !== 0 ? ` (exit ${out.exitCode})` : ''}`);
      return undefined;
    }
  };

  const tMs = read(C.time.id, C.time.parse) ?? Number.NaN;
  const rails: RailSample[] = [];
  // The rails of one cage print the same *_phy block when nothing counted between their reads (always so on the
  // simulated lab, where a tick is one instant): the same text is parsed once (the parser is pure; its typed counters
  // are never changed after parsing, so the rails may share them).
  let lastStats: { text: string; parsed: EthtoolStats } | null = null;
  const parseStats = (text: string): EthtoolStats => {
    if (lastStats?.text !== text) lastStats = { text, parsed: C.stats.parse(text) };
    return lastStats.parsed;
  };
  for (const item of input.items) {
    if (!item.id.startsWith(`${C.stats.id}:`)) continue;
    const netdev = item.id.slice(C.stats.id.length + 1);
    const stats = read(item.id, parseStats);
    const rail: RailSample = { netdev, phy: stats?.phy ?? { laneErrors: [] } };
    const link = read(`${C.link.id}:${netdev}`, C.link.parse);
    if (link) {
      if (link.linkDetected !== null) rail.linkUp = link.linkDetected;
      rail.speedMbps = link.speedMbps;
      rail.lanes = link.lanes;
    }
    const fec = read(`${C.fec.id}:${netdev}`, C.fec.parse);
    if (fec) {
      rail.fec = { active: fec.active };
      if (fec.stats?.correctedBlocks != null) rail.fec.correctedBlocks = fec.stats.correctedBlocks;
      if (fec.stats?.uncorrectableBlocks != null) rail.fec.uncorrectableBlocks = fec.stats.uncorrectableBlocks;
      if (fec.stats?.correctedBits != null) rail.fec.correctedBits = fec.stats.correctedBits;
    }
    rails.push(rail);
  }
  const nicTempC = read(C.hwmon.id, C.hwmon.parse) ?? null;
  const gpus = read(C.gpu.id, C.gpu.parse) ?? [];
  // Extra readings: a value, or null when the item failed (its error line says why); absent when not asked this tick.
  const readings: Record<string, number | null> = {};
  for (const item of input.items) {
    if (!item.id.startsWith('reading:')) continue;
    const r = readingProbe(item.id.slice('reading:'.length));
    if (r) readings[r.id] = read(item.id, r.parse) ?? null;
  }

  const known = new Set(input.items.map((i) => i.id));
  for (const o of input.outputs) if (!known.has(o.id)) errors.push(`${o.id}: unexpected item in the answer`);

  return {
    sample: {
      node: input.node,
      tick: input.tick,
      tMs,
      controllerMs: input.controllerMs,
      rails,
      nicTempC,
      gpus,
      ...(Object.keys(readings).length ? { readings } : {}),
      errors,
    },
    raw,
  };
}
