import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { parseNodeTime } from '../../src/probes/node-time.js';
import { assembleSample, sampleSetItems, validateSampleSet, type SampleSetConfig } from '../../src/sampling/sample-set.js';
import { buildTickScript, formatTickScriptOutput, splitTickScriptOutput, type ScriptItemOutput } from '../../src/transport/tick-script.js';
import { cmd, matchEthtoolStatsPhy } from '../../src/transport/commands.js';
import { sample } from '../helpers/samples.js';
import { genFec, genGpu, genHwmon, genLink, genStats } from './generated.js';

const A = 'enp1s0f1np1';
const B = 'enP2p1s0f1np1';
const config: SampleSetConfig = { rails: [A, B], fecNetdev: A, linkEveryTicks: 3 };

// Through the real framing: what the shell would print for these outputs, split back.
const framed = (outs: ScriptItemOutput[]) => splitTickScriptOutput(formatTickScriptOutput(outs));

describe('sampleSetItems', () => {
  it('asks node time first, counters of both rails every tick, link every N ticks, FEC on the canonical netdev', () => {
    expect(sampleSetItems(config, 0).map((i) => i.id)).toEqual(['time', `stats:${A}`, `stats:${B}`, `link:${A}`, `link:${B}`, `fec:${A}`, 'hwmon', 'gpu']);
    expect(sampleSetItems(config, 1).map((i) => i.id)).toEqual(['time', `stats:${A}`, `stats:${B}`, `fec:${A}`, 'hwmon', 'gpu']);
    expect(sampleSetItems(config, 3).some((i) => i.id === `link:${B}`)).toBe(true);
    const items = sampleSetItems({ rails: [A], hwmon: false, gpu: false, fecEveryTicks: 0 }, 0);
    expect(items).toEqual([
      { id: 'time', command: 'echo "${EPOCHREALTIME:-$(date +%s.%N)}"' }, // no fork in bash
      { id: `stats:${A}`, command: cmd.ethtoolStatsPhy(A) }, // only *_phy lines travel, through the shell's filter
      { id: `link:${A}`, command: `ethtool ${A}` },
    ]);
    expect(matchEthtoolStatsPhy(items[1]!.command)).toBe(A);
    expect(items[1]!.command.endsWith(`; __cq_phy ${A}`)).toBe(true);
    expect(sampleSetItems({ rails: [A], fullStats: true }, 1)[1]).toEqual({ id: `stats:${A}`, command: `ethtool -S ${A}` });
    // One script, one line: what the shell gets in one round trip.
    expect(buildTickScript(sampleSetItems(config, 0)).includes('\n')).toBe(false);
  });

  it('refuses bad configurations before anything runs', () => {
    expect(() => validateSampleSet({ rails: [] })).toThrow(UsageError);
    expect(() => validateSampleSet({ rails: [A, A] })).toThrow(/duplicate netdev/);
    expect(() => validateSampleSet({ rails: [A], fecNetdev: B })).toThrow(/not one of the rails/);
    expect(() => validateSampleSet({ rails: ['eth0;reboot'] })).toThrow(/refusing interface name/);
    expect(() => validateSampleSet({ rails: [A], linkEveryTicks: -1 })).toThrow(/sampling period/);
  });
});

describe('parseNodeTime', () => {
  it('keeps microseconds of a nanosecond epoch count beyond 2^53', () => {
    expect(parseNodeTime('1767225600123456789\n')).toBe(1767225600123.456);
    expect(() => parseNodeTime('1767225600N\n')).toThrow(/expected epoch seconds.fraction/); // busybox date without %N
  });

  it('reads $EPOCHREALTIME (either decimal mark) and date +%s.%N to the microsecond', () => {
    expect(parseNodeTime('1767225600.123456\n')).toBe(1767225600123.456);
    expect(parseNodeTime('1767225600,123456\n')).toBe(1767225600123.456); // bash in a locale with a decimal comma
    expect(parseNodeTime('1767225600.123456789\n')).toBe(1767225600123.456);
    expect(parseNodeTime('1767225600.5')).toBe(1767225600500);
    expect(() => parseNodeTime('1767225600.N\n')).toThrow(/expected epoch seconds.fraction/);
    expect(() => parseNodeTime('\n')).toThrow(/got "\\n"/);
  });
});

describe('assembleSample', () => {
  it('parses every item of a generated answer into one NodeSample', () => {
    const items = sampleSetItems(config, 0);
    const { sample: s, raw } = assembleSample({
      node: 'spark-a',
      tick: 0,
      controllerMs: 1_000_000,
      items,
      outputs: framed([
        { id: 'time', stdout: '1767225600123456789\n', exitCode: 0 },
        { id: `stats:${A}`, stdout: genStats([6, 2, 190, 0], 198), exitCode: 0 },
        { id: `stats:${B}`, stdout: genStats([1, 0, 0, 0], 7), exitCode: 0 },
        { id: `link:${A}`, stdout: genLink(A, true), exitCode: 0 },
        { id: `link:${B}`, stdout: genLink(B, false), exitCode: 0 },
        { id: `fec:${A}`, stdout: genFec(A), exitCode: 0 },
        { id: 'hwmon', stdout: genHwmon(81250), exitCode: 0 },
        { id: 'gpu', stdout: genGpu(97, 71, '42.15'), exitCode: 0 },
      ]),
    });
    expect(s.errors).toEqual([]);
    expect(s).toMatchObject({ node: 'spark-a', tick: 0, tMs: 1767225600123.456, controllerMs: 1_000_000, nicTempC: 81.25 });
    expect(s.gpus).toEqual([{ utilizationPct: 97, temperatureC: 71, powerW: 42.15 }]);
    const [ra, rb] = s.rails;
    expect(ra).toMatchObject({ netdev: A, linkUp: true, speedMbps: 200000, lanes: 4 });
    expect(ra!.phy.laneErrors[2]).toBe(190n);
    expect(ra!.phy.correctedBits).toBe(198n);
    expect(ra!.fec).toEqual({ active: 'RS', correctedBlocks: 12n, uncorrectableBlocks: 0n, correctedBits: 34n });
    expect(rb).toMatchObject({ netdev: B, linkUp: false });
    expect(rb!.fec).toBeUndefined();
    expect(rb!.phy.correctedBits).toBe(7n);
    expect(raw['gpu']).toBe('0, NVIDIA GB10, 97, 71, 42.15\n');
  });

  it('reads recorded partial outputs (GX10 lanes 6/2/190/0, Spark Speed line, Spark FEC None)', () => {
    // Real texts, minus the shell prompts of the pastes; they are partial (grep'ed), so link state stays unknown.
    const stats = sample('ethtool-stats/gx10-blog-lane-errors-partial.txt');
    const link = sample('ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt').split('\n')[1]! + '\n';
    const fec = sample('ethtool-fec/spark-fb97-show-fec-auto-none-direct-dac.txt').split('\n').slice(1, 4).join('\n') + '\n';
    const items = sampleSetItems({ rails: [A], hwmon: false, gpu: false }, 0);
    const { sample: s } = assembleSample({
      node: 'spark-a',
      tick: 0,
      controllerMs: 5,
      items,
      outputs: framed([
        { id: 'time', stdout: '1767225600000000000\n', exitCode: 0 },
        { id: `stats:${A}`, stdout: stats, exitCode: 0 },
        { id: `link:${A}`, stdout: link, exitCode: 0 },
        { id: `fec:${A}`, stdout: fec, exitCode: 0 },
      ]),
    });
    expect(s.errors).toEqual([]);
    const r = s.rails[0]!;
    expect(r.phy).toEqual({ laneErrors: [6n, 2n, 190n, 0n], correctedBits: 198n });
    expect(r.speedMbps).toBe(200000);
    expect(r.lanes).toBeNull();
    expect(r.linkUp).toBeUndefined();
    expect(r.fec).toEqual({ active: 'None' });
    expect(s.nicTempC).toBeNull();
    expect(s.gpus).toEqual([]);
  });

  it('keeps the tick when items are garbage, missing or cut off: one error line each, values missing, never zero', () => {
    const items = sampleSetItems(config, 1);
    const text = formatTickScriptOutput([
      { id: 'time', stdout: '1767225600N\n', exitCode: 0 },
      { id: `stats:${A}`, stdout: genStats([6, 2, 190, 0], 198), exitCode: 0 },
      { id: `stats:${B}`, stdout: 'NIC statistics:\n     rx_err_lane_0_phy: -1\n', exitCode: 0 },
      { id: `fec:${A}`, stdout: 'sh: 1: ethtool: not found\n', exitCode: 127 },
      // hwmon left out entirely
    ]);
    // gpu answer cut off mid-output: no rc line.
    const { sample: s, raw } = assembleSample({
      node: 'spark-b',
      tick: 1,
      controllerMs: 9,
      items,
      outputs: splitTickScriptOutput(`${text}@@cq gpu\n0, NVIDIA GB10, 9`),
    });
    // Parser wording belongs to the probes; the item prefix, the cause and the exit code are ours.
    expect(s.errors).toEqual([
      'time: node time: expected epoch seconds.fraction ($EPOCHREALTIME or date +%s.%N), got "1767225600N\\n"',
      expect.stringMatching(new RegExp(`^fec:${A}: ethtool-fec: line 1: .*ethtool: not found.* \\(exit 127\\)$`)),
      expect.stringMatching(new RegExp(`^stats:${B}: ethtool-stats: line 2: counter rx_err_lane_0_phy: .*-1.* not an unsigned 64-bit`)),
      'hwmon: no output for this item',
      'gpu: output cut off (no exit status)',
    ]);
    expect(Number.isNaN(s.tMs)).toBe(true);
    expect(s.nicTempC).toBeNull();
    expect(s.gpus).toEqual([]);
    expect(s.rails.map((r) => r.netdev)).toEqual([A, B]);
    expect(s.rails[0]!.phy.laneErrors[2]).toBe(190n);
    expect(s.rails[1]!.phy).toEqual({ laneErrors: [] });
    expect(s.rails[0]!.fec).toBeUndefined();
    expect(raw[`stats:${B}`]).toBe('NIC statistics:\n     rx_err_lane_0_phy: -1\n');
    expect(raw['gpu']).toBe('0, NVIDIA GB10, 9');
  });
});
