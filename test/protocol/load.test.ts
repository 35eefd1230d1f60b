import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { limitOf } from '../../src/protocol/limits.js';
import { loadProtocol, parseProtocol } from '../../src/protocol/load.js';
import { renderCommand } from '../../src/protocol/template.js';
import type { SoakPhase } from '../../src/protocol/types.js';

const ROOT = join(import.meta.dirname, '..', '..');
const QUICK = join(ROOT, 'protocols', 'quick.json');
const FULL = join(ROOT, 'protocols', 'spark-burnin.json');

// A copy of quick.json changed by `edit`, parsed under a fake label.
// The limit entry of a rule in a protocol's JSON.
const ruleLimit = (p: Record<string, any>, rule: string): Record<string, any> => p.limits.find((l: { rule: string }) => l.rule === rule);

function broken(edit: (p: Record<string, any>) => void): () => unknown {
  const p = JSON.parse(readFileSync(QUICK, 'utf8'));
  edit(p);
  return () => parseProtocol(JSON.stringify(p), 'protocols/x.json');
}

describe('loadProtocol', () => {
  it('loads spark-burnin with the procedure of the README (preflight, benchmarks, 10 + 60 min soaks)', () => {
    const p = loadProtocol(FULL);
    expect(p.name).toBe('spark-burnin');
    expect(p.samplingIntervalS).toBe(1);
    expect(p.phases.map((x) => `${x.kind}:${x.name}`)).toEqual([
      'preflight:preflight',
      'identity:identity',
      'loopback:loopback',
      'ib_write_bw:ib-write-bw',
      'nccl:nccl',
      'soak:soak-idle',
      'soak:soak-loaded',
    ]);
    const soaks = p.phases.filter((x): x is SoakPhase => x.kind === 'soak');
    expect(soaks.map((s) => [s.durationS, s.gpuLoad])).toEqual([
      [600, false],
      [3600, true],
    ]);
    expect(p.phases[3]).toMatchObject({ durationS: 30, msgSize: 65536, bidirectional: true });
    expect(p.phases[2]).toMatchObject({ durationS: 10 });
    expect(limitOf(p, 'loopback-floor')).toMatchObject({ direction: 'min', fail: 90 });
    expect(limitOf(p, 'gpu-util-min')).toMatchObject({ direction: 'min', fail: 90 });
    expect(limitOf(p, 'crc-errors')).toMatchObject({ direction: 'max', fail: 1 });
    expect(limitOf(p, 'lane-ratio')).toMatchObject({ direction: 'max', fail: 1000, marginal: 100 });
    expect(limitOf(p, 'fec-margin')).toMatchObject({ direction: 'min', fail: 1, marginal: 2 });
    expect(limitOf(p, 'ib-write-bw-sum')).toMatchObject({ direction: 'min', fail: 170, marginal: 180 });
    expect(p.earlyStop).toEqual({ keepSamplingS: 10 });
    expect(limitOf(p, 'fec-window')).toMatchObject({ direction: 'min', fail: 1, marginal: 2, params: { windowS: 60, holdS: 10 } });
    expect(limitOf(p, 'lane-ratio').params).toEqual({
      marginalFloorBer: 1e-9,
      failFloorBer: 1e-6,
      growingDecades: 1,
      runawayDecades: 0.5,
      minSpanC: 5,
      windowS: 60,
      holdS: 10,
    });
    expect(p.notes).toEqual([]);
    expect(p.regression).toEqual({ throughputPct: 5, busbwPct: 5, berDecades: 0.5, tempC: 5 });
    expect(p.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(p.file).toBe(FULL);
  });

  it('quick.json runs the same steps in about five minutes of load', () => {
    const q = loadProtocol(QUICK);
    const f = loadProtocol(FULL);
    expect(q.phases.map((x) => x.kind)).toEqual(f.phases.map((x) => x.kind));
    const loadS = q.phases.reduce((s, x) => s + (x.durationS ?? 0), 0);
    expect(loadS).toBeGreaterThanOrEqual(240);
    expect(loadS).toBeLessThanOrEqual(330);
    expect(q.commands).toEqual(f.commands);
    expect(q.limits).toEqual(f.limits);
  });

  it('keeps the command templates exactly as the simulator parses them', () => {
    const c = loadProtocol(FULL).commands;
    expect(c.ibWriteBwServer).toBe('stdbuf -oL ib_write_bw -d {rdmaDevice} -p {tcpPort} -F --report_gbits -s {msgSize} --run_infinitely');
    expect(c.ibWriteBwClient).toBe('ib_write_bw -d {rdmaDevice} -p {tcpPort} -F --report_gbits -s {msgSize} --run_infinitely {serverIp}');
    expect(c.loopbackClient).toBe('ib_write_bw -d {rdmaDevice} -p {tcpPort} -F --report_gbits -s {msgSize} -D {durationS} {serverIp}');
    expect(c.nccl).toBe('mpirun --mca oob_tcp_if_include {oobInclude} {ranks}');
    expect(c.ncclRank).toBe(
      '-np 1 -H {ip}:1 -x LD_LIBRARY_PATH -x NCCL_DEBUG=INFO -x NCCL_IB_HCA={hcaList} -x NCCL_SOCKET_IFNAME={netdev} -x OMPI_MCA_btl_tcp_if_include={netdev} -x UCX_NET_DEVICES={netdev} all_reduce_perf -b 256M -e 1G -f 2 -g 1',
    );
    expect(c.gpuLoad).toEqual({
      form: 'program',
      program: 'gpu_burn',
      args: ['-m', '16384', '-c', '/usr/local/share/gpu-burn/compare.ptx', '{durationS}'],
      requires: ['/usr/local/share/gpu-burn/compare.ptx'],
    });
  });

  it('hashes the file bytes (a whitespace change is a different protocol)', () => {
    const text = readFileSync(QUICK, 'utf8');
    const a = parseProtocol(text, 'a');
    expect(a.sha256).toBe(loadProtocol(QUICK).sha256);
    expect(parseProtocol(`${text}\n`, 'a').sha256).not.toBe(a.sha256);
  });

  it('names a missing file in one line', () => {
    expect(() => loadProtocol('protocols/nope.json')).toThrow('protocols/nope.json: cannot read protocol file (ENOENT)');
  });
});

describe('protocol validation messages', () => {
  const cases: [string, (p: Record<string, any>) => void, string][] = [
    [
      'negative duration',
      (p) => (p.phases[3].durationS = -5),
      'protocols/x.json: phases[3].durationS: expected a number in [1, 3600] (seconds of load), got -5',
    ],
    [
      'string duration',
      (p) => (p.phases[5].durationS = '60'),
      'protocols/x.json: phases[5].durationS: expected a whole number in [1, 259200] (seconds of load), got "60"',
    ],
    [
      'unknown kind',
      (p) => (p.phases[1].kind = 'burn'),
      'protocols/x.json: phases[1].kind: expected one of preflight, identity, loopback, ib_write_bw, nccl, soak, got "burn"',
    ],
    ['missing gpuLoad', (p) => delete p.phases[6].gpuLoad, 'protocols/x.json: phases[6].gpuLoad: expected a value (required key)'],
    [
      'typo key',
      (p) => (p.phases[3].durationSec = 3),
      'protocols/x.json: phases[3].durationSec: expected no such key (known: name, kind, durationS, msgSize, bidirectional)',
    ],
    [
      'duplicate phase',
      (p) => (p.phases[6].name = 'soak-idle'),
      'protocols/x.json: phases[6].name: expected a name not used by an earlier phase, got "soak-idle"',
    ],
    ['missing top key', (p) => delete p.limits, 'protocols/x.json: limits: expected a value (required key)'],
    ['limit direction flipped', (p) => (p.limits[0].direction = 'min'), 'protocols/x.json: limits[0].direction: expected "max" for crc-errors, got "min"'],
    [
      'marginal on the bad side',
      (p) => (p.limits[3].marginal = 0.5),
      'protocols/x.json: limits[3].marginal: expected a number above fail (1) for a min limit, got 0.5',
    ],
    ['rule twice', (p) => p.limits.push({ ...p.limits[0] }), 'protocols/x.json: limits: expected exactly one limit with rule "crc-errors", got "2"'],
    [
      'unknown rule',
      (p) => (p.limits[0].rule = 'crc'),
      'protocols/x.json: limits[0].rule: expected one of crc-errors, post-fec-errors, link-down-events, fec-margin, fec-window, lane-ratio, ib-write-bw-sum, loopback-floor, gpu-util-min, soak-link-load, phy-recoveries, got "crc"',
    ],
    ['unit not the declared one', (p) => (p.limits[0].unit = 'frames'), 'protocols/x.json: limits[0].unit: expected "errors" for crc-errors, got "frames"'],
    [
      'setting of another rule',
      (p) => (p.limits[0].windowS = 60),
      'protocols/x.json: limits[0].windowS: expected no such key (known for crc-errors: rule, fail, direction, marginal, unit, description)',
    ],
    [
      'setting out of range',
      (p) => (ruleLimit(p, 'fec-window').windowS = 0),
      'protocols/x.json: limits[4].windowS: expected a number in (0, 86400] (s: length of the sliding window over the soaks), got 0',
    ],
    [
      'floor not a number',
      (p) => (ruleLimit(p, 'lane-ratio').failFloorBer = '1e-6'),
      'protocols/x.json: limits[5].failFloorBer: expected a number in (0, 1) (BER: ... and this before a ratio can FAIL it), got "1e-6"',
    ],
    [
      'template typo',
      (p) => (p.commands.gpuLoad = 'gpu_burn {duration}'),
      'protocols/x.json: commands.gpuLoad: expected placeholders among {durationS}, got "{duration}"',
    ],
    [
      'shell operator',
      (p) => (p.commands.gpuLoad = 'gpu_burn {durationS}; reboot'),
      'protocols/x.json: commands.gpuLoad: expected a plain command line without shell operators, got "gpu_burn {durationS}; reboot"',
    ],
    [
      'gpu pct over 100',
      (p) => (p.phases[6].gpuUtilMinPct = 190),
      'protocols/x.json: phases[6].gpuUtilMinPct: expected a number in (0, 100] (percent), got 190',
    ],
    [
      'zero ticks',
      (p) => (p.earlyStop.laneRatioConsecutiveTicks = 0),
      'protocols/x.json: earlyStop.laneRatioConsecutiveTicks: expected a whole number in [1, 3600] (ticks), got 0',
    ],
    ['empty phases', (p) => (p.phases = []), 'protocols/x.json: phases: expected a non-empty array, got []'],
    ['zero gap tolerance', (p) => (p.maxSampleGapS = 0), 'protocols/x.json: maxSampleGapS: expected a number in (0, 3600] (seconds without a sample), got 0'],
    [
      'string gap tolerance',
      (p) => (p.maxSampleGapS = '90'),
      'protocols/x.json: maxSampleGapS: expected a number in (0, 3600] (seconds without a sample), got "90"',
    ],
    [
      'gap tolerance under two intervals',
      (p) => ((p.samplingIntervalS = 5), (p.maxSampleGapS = 9.5)),
      'protocols/x.json: maxSampleGapS: expected a number of seconds >= 2 x samplingIntervalS (10), got 9.5',
    ],
  ];
  for (const [what, edit, message] of cases) {
    it(`${what}: one line naming file, path and expectation`, () => {
      const f = broken(edit);
      expect(f).toThrow(UsageError);
      expect(f).toThrow(message);
      try {
        f();
      } catch (e) {
        expect((e as Error).message).toBe(message);
        expect((e as Error).message).not.toContain('\n');
      }
    });
  }

  it('bad JSON is one line too', () => {
    expect(() => parseProtocol('{ "name": ', 'protocols/x.json')).toThrow(/^protocols\/x\.json: not valid JSON: /);
  });

  it('fills defaults: sampling interval 1 s, msgSize 65536; the loopback floor and GPU minimum are the limits', () => {
    const p = JSON.parse(readFileSync(QUICK, 'utf8'));
    delete p.samplingIntervalS;
    delete p.phases[2].msgSize;
    ruleLimit(p, 'loopback-floor').fail = 95;
    ruleLimit(p, 'gpu-util-min').fail = 80;
    const q = parseProtocol(JSON.stringify(p), 'x');
    expect(q.samplingIntervalS).toBe(1);
    expect(q.maxSampleGapS).toBe(60);
    expect(q.phases[2]).toMatchObject({ msgSize: 65536 });
    expect(limitOf(q, 'loopback-floor').fail).toBe(95);
    expect(limitOf(q, 'gpu-util-min').fail).toBe(80);
    expect(q.notes).toEqual([]);
  });

  it('an older protocol`s floorGbps / gpuUtilMinPct on a phase was the figure checked: it becomes the limit, noted', () => {
    const p = JSON.parse(readFileSync(QUICK, 'utf8'));
    p.phases[2].floorGbps = 95;
    p.phases[6].gpuUtilMinPct = 80;
    ruleLimit(p, 'loopback-floor').fail = 90;
    ruleLimit(p, 'gpu-util-min').fail = 90;
    const q = parseProtocol(JSON.stringify(p), 'x');
    expect(limitOf(q, 'loopback-floor').fail).toBe(95);
    expect(limitOf(q, 'gpu-util-min').fail).toBe(80);
    expect(q.notes).toEqual([
      "phases[2].floorGbps: 95 read as the loopback-floor limit (the limits said 90): the phase's figure is the one checked",
      "phases[6].gpuUtilMinPct: 80 read as the gpu-util-min limit (the limits said 90): the phase's figure is the one checked",
    ]);
    // The same figure on the phase and in the limits: nothing to say.
    p.phases[2].floorGbps = 90;
    p.phases[6].gpuUtilMinPct = 90;
    expect(parseProtocol(JSON.stringify(p), 'x').notes).toEqual([]);
  });
});

describe('maxSampleGapS (node-loss tolerance)', () => {
  it('the shipped protocols leave it at the default 60 s', () => {
    expect(loadProtocol(FULL).maxSampleGapS).toBe(60);
    expect(loadProtocol(QUICK).maxSampleGapS).toBe(60);
  });

  it('keeps a value set in the file, down to exactly two sampling intervals', () => {
    const p = JSON.parse(readFileSync(QUICK, 'utf8'));
    p.maxSampleGapS = 120;
    expect(parseProtocol(JSON.stringify(p), 'x').maxSampleGapS).toBe(120);
    p.samplingIntervalS = 0.5;
    p.maxSampleGapS = 1;
    expect(parseProtocol(JSON.stringify(p), 'x').maxSampleGapS).toBe(1);
  });

  it('left out under a slow interval, it stretches to two intervals instead of refusing an older protocol', () => {
    const p = JSON.parse(readFileSync(QUICK, 'utf8'));
    p.samplingIntervalS = 45;
    expect(parseProtocol(JSON.stringify(p), 'x').maxSampleGapS).toBe(90);
    p.samplingIntervalS = 30;
    expect(parseProtocol(JSON.stringify(p), 'x').maxSampleGapS).toBe(60);
  });
});

describe('older protocols and the protocols journals embed', () => {
  const V1 = readFileSync(join(import.meta.dirname, '..', 'fixtures', 'journals-v1', 'protocol-spark-burnin-v1.json'), 'utf8');

  it('a rules version 1 protocol loads: fec-window gets its defaults, 5 ticks become a 5-s lane-ratio hold, each noted', () => {
    const p = parseProtocol(V1, 'old.json');
    expect(limitOf(p, 'fec-window')).toMatchObject({ fail: 1, marginal: 2, params: { windowS: 60, holdS: 10 } });
    expect(limitOf(p, 'lane-ratio').params).toMatchObject({ holdS: 5, marginalFloorBer: 1e-9, failFloorBer: 1e-6 });
    expect(p.earlyStop).toEqual({ keepSamplingS: 10, laneRatioConsecutiveTicks: 5 });
    expect(p.notes).toEqual([
      'limits: no limit for fec-window (added in rules version 2): its default applies',
      'limits: no limit for soak-link-load (added in rules version 3): its default applies',
      'limits: no limit for phy-recoveries (added in rules version 5): its default applies',
      'earlyStop.laneRatioConsecutiveTicks: 5 ticks of 1 s read as the lane-ratio holdS 5 s (persistence is in seconds since rules version 2)',
    ]);
  });

  it('ticks are converted with the sampling interval (10 Hz: 5 ticks are half a second); a holdS in the file wins', () => {
    const p = JSON.parse(V1);
    p.samplingIntervalS = 0.1;
    expect(limitOf(parseProtocol(JSON.stringify(p), 'x'), 'lane-ratio').params!['holdS']).toBeCloseTo(0.5, 12);
    const q = JSON.parse(readFileSync(FULL, 'utf8'));
    q.earlyStop.laneRatioConsecutiveTicks = 50;
    const parsed = parseProtocol(JSON.stringify(q), 'x');
    expect(limitOf(parsed, 'lane-ratio').params!['holdS']).toBe(10);
    expect(parsed.notes).toEqual(['earlyStop.laneRatioConsecutiveTicks: ignored, the lane-ratio limit sets holdS']);
  });

  it('a journal`s protocol naming a rule this version does not know is read, the rule noted and ignored', () => {
    const p = JSON.parse(readFileSync(FULL, 'utf8'));
    p.limits.push({ rule: 'eye-height', direction: 'min', fail: 10, unit: 'mV' });
    ruleLimit(p, 'fec-window').slopeC = 3;
    ruleLimit(p, 'crc-errors').unit = 'frames';
    const text = JSON.stringify(p);
    expect(() => parseProtocol(text, 'x.json')).toThrow('x.json: limits[0].unit: expected "errors" for crc-errors, got "frames"');
    const q = parseProtocol(text, 'journal', { lenient: true });
    expect(q.limits.map((l) => l.rule)).not.toContain('eye-height');
    expect(limitOf(q, 'crc-errors').unit).toBe('errors');
    expect(q.notes).toEqual([
      'limits[0].unit: "frames" read as "errors", as crc-errors declares',
      'limits[4].slopeC: not a setting of fec-window in this version of the rules: ignored',
      `limits[${p.limits.length - 1}]: rule "eye-height" is not known to this version of the rules: ignored`,
    ]);
  });

  it('direction and unit may be left out: the rule declares them', () => {
    const p = JSON.parse(readFileSync(FULL, 'utf8'));
    delete ruleLimit(p, 'crc-errors').direction;
    delete ruleLimit(p, 'crc-errors').unit;
    expect(limitOf(parseProtocol(JSON.stringify(p), 'x'), 'crc-errors')).toMatchObject({ direction: 'max', unit: 'errors', fail: 1 });
  });
});

describe('renderCommand', () => {
  const c = loadProtocol(FULL).commands;
  it("expands a client; an older template's {bidirectional} expands to nothing (each direction is its own stream)", () => {
    const v = { rdmaDevice: 'rocep1s0f1', tcpPort: 18515, msgSize: 65536, serverIp: '192.168.100.2' };
    expect(renderCommand(c.ibWriteBwClient, { ...v, bidirectional: '' })).toBe(
      'ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely 192.168.100.2',
    );
    const older = 'ib_write_bw -d {rdmaDevice} -p {tcpPort} -F --report_gbits -s {msgSize} {bidirectional} --run_infinitely';
    expect(renderCommand(older, { ...v, bidirectional: '' })).toBe('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely');
  });
  it('refuses a missing placeholder value and shell syntax in a value', () => {
    expect(() => renderCommand(c.ncclRank!, {})).toThrow('command template needs {ip}');
    expect(() => renderCommand(c.ncclRank!, { ip: '1; rm -rf /', netdev: 'x', hcaList: 'y' })).toThrow(UsageError);
  });
});
