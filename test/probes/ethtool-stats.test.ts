import { describe, expect, it } from 'vitest';
import { bigintReplacer } from '../../src/domain/u64.js';
import { parseEthtoolStats } from '../../src/probes/ethtool-stats.js';
import { phyToNames } from '../../src/domain/sample.js';
import { parseCommand } from '../../src/cli/parse-command.js';
import type { CliIo } from '../../src/cli/io.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { sample, sampleSource, samplesIn } from '../helpers/samples.js';
import { parseErrorOf } from '../helpers/parse-error.js';

// `cablequal parse` as the CLI runs it (parse-command directly, so this test does not load the whole CLI).
async function parseViaCli(kind: string, file: string): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: async () => '',
    isTTY: false,
    cwd: process.cwd(),
    env: {},
  };
  const code = await parseCommand(kind, file, io);
  return { code, out, err };
}

// The CX-4 paste holds `ethtool -i` and `ethtool -S` in Markdown fences: keep only the -S block.
function cx4Stats(): string {
  const lines = sample('ethtool-stats/cx4-ubuntu1804-ethtool-i-and-S-head-partial.txt').split('\n');
  const from = lines.indexOf('# ethtool -S output');
  const open = lines.indexOf('```', from);
  const close = lines.indexOf('```', open + 1);
  return lines.slice(open + 1, close).join('\n') + '\n';
}

// The annotated 100G page: its author appended "  # <comment>" to every line; remove that to get the raw lines.
function annotated100g(): string {
  return sample('ethtool-stats/mlx5-100g-annotated-phy-section-lane3-errors.txt')
    .split('\n')
    .map((l) => l.replace(/ {2}#.*$/, ''))
    .join('\n');
}

const gx10 = () => sample('ethtool-stats/gx10-blog-lane-errors-partial.txt');

const parseErr = (text: string) => parseErrorOf(() => parseEthtoolStats(text));

describe('parseEthtoolStats on real samples', () => {
  it('every sample in samples/ethtool-stats keeps its # source line and is tested here', () => {
    const files = samplesIn('ethtool-stats').sort();
    expect(files).toEqual([
      'ethtool-stats/constructed-mlx5-phy-lines-with-recovery-counter-from-en_stats-patch.txt',
      'ethtool-stats/cx4-ubuntu1804-ethtool-i-and-S-head-partial.txt',
      'ethtool-stats/gx10-blog-lane-errors-partial.txt',
      'ethtool-stats/mlx5-100g-annotated-phy-section-lane3-errors.txt',
    ]);
    for (const f of files) expect(sampleSource(f)).toMatch(/^# source: /);
  });

  // Issue #33 item 5: a kernel with the 2025-03 mlx5 patch prints total_success_recovery_phy after the lanes.
  it('the recovery counter of a newer kernel is a *_phy counter like the others (constructed from the patch)', () => {
    const s = parseEthtoolStats(sample('ethtool-stats/constructed-mlx5-phy-lines-with-recovery-counter-from-en_stats-patch.txt'));
    expect(s.phy.recoveries).toBe(3n);
    expect(s.lanes).toEqual([6n, 2n, 190n, 0n]);
    expect(s.phy.laneErrors).toEqual([6n, 2n, 190n, 0n]);
    expect(s.counters['total_success_recovery_phy']).toBe(3n);
    expect(phyToNames(s.phy).map(([n]) => n)).toContain('total_success_recovery_phy');
    // Older kernels (every recorded sample): absent, never an error.
    expect(parseEthtoolStats(gx10()).phy.recoveries).toBeUndefined();
  });

  it('GX10 200G DAC (headerless grep paste): lanes 6/2/190/0, corrected bits 198', () => {
    const s = parseEthtoolStats(gx10());
    expect(s.lanes).toEqual([6n, 2n, 190n, 0n]);
    expect(s.correctedBits).toBe(198n);
    expect(Object.keys(s.counters)).toHaveLength(5);
    expect(s.counters['rx_err_lane_2_phy']).toBe(190n);
    // Not printed in this paste: null, never a made-up zero.
    expect(s.crcErrors).toBeNull();
    expect(s.linkDownEvents).toBeNull();
    expect(s.rxBits).toBeNull();
  });

  it('annotated degraded 100G mlx5 PHY section: lane 3 carries the errors, 386 post-FEC errors', () => {
    const s = parseEthtoolStats(annotated100g());
    expect(Object.keys(s.counters)).toHaveLength(59);
    expect(s.lanes).toEqual([28116n, 0n, 0n, 17722623n]);
    expect(s.correctedBits).toBe(17750739n);
    expect(s.crcErrors).toBe(386n);
    expect(s.pcsSymbolErrors).toBe(386n);
    expect(s.symbolErrors).toBe(386n);
    expect(s.linkDownEvents).toBe(0n);
    expect(s.counters['rx_packets_phy']).toBe(15005729n);
    expect(s.counters['rx_prio0_bytes']).toBe(2027206797n);
    expect(s.counters['tx_pci_signal_integrity']).toBe(2n);
    expect(s.counters['module_bad_shorted']).toBe(0n);
  });

  it('CX-4 head of a full dump (with the NIC statistics: header): 23 software counters, no PHY section', () => {
    const text = cx4Stats();
    expect(text.startsWith('NIC statistics:\n     rx_packets: 845320277\n')).toBe(true);
    const s = parseEthtoolStats(text);
    expect(Object.keys(s.counters)).toHaveLength(23);
    expect(s.counters['rx_packets']).toBe(845320277n);
    expect(s.counters['rx_bytes']).toBe(2195783498134n);
    expect(s.counters['tx_tso_bytes']).toBe(1822751919330n);
    expect(s.counters['tx_queue_stopped']).toBe(0n);
    expect(Object.keys(s.counters)[0]).toBe('rx_packets');
    expect(Object.keys(s.counters).at(-1)).toBe('tx_queue_stopped');
    expect(s.lanes).toEqual([]);
    expect(s.correctedBits).toBeNull();
  });

  it('`cablequal parse ethtool-stats` prints the counters JSON contract', async () => {
    const r = await parseViaCli('ethtool-stats', 'samples/ethtool-stats/gx10-blog-lane-errors-partial.txt');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as { counters: Record<string, unknown>; lanes: unknown[] };
    expect(json.counters).toEqual({
      rx_err_lane_0_phy: 6,
      rx_err_lane_1_phy: 2,
      rx_err_lane_2_phy: 190,
      rx_err_lane_3_phy: 0,
      rx_corrected_bits_phy: 198,
    });
    expect(json.lanes).toEqual([6, 2, 190, 0]);
  });
});

describe('parseEthtoolStats at mlx5 size (GENERATED text, not a recording)', () => {
  // Generated in the test: ~1,500 counters shaped like an mlx5 dump (per-channel, per-priority, vport, phy).
  function generatedMlx5Dump(): { text: string; expected: Map<string, bigint> } {
    const expected = new Map<string, bigint>();
    let seed = 12345n;
    const next = () => (seed = (seed * 6364136223846793005n + 1442695040888963407n) & ((1n << 64n) - 1n));
    const add = (name: string, v: bigint = next() >> 20n) => expected.set(name, v);
    for (const n of ['rx_packets', 'rx_bytes', 'tx_packets', 'tx_bytes', 'rx_vport_unicast_packets', 'rx_vport_unicast_bytes']) add(n);
    for (let ch = 0; ch < 20; ch++) {
      for (const f of ['events', 'poll', 'arm', 'aff_change', 'force_irq', 'eq_rearm']) add(`ch${ch}_${f}`);
      for (let k = 0; k < 30; k++) add(`rx${ch}_field${k}`);
      for (let k = 0; k < 30; k++) add(`tx${ch}_field${k}`);
      for (let k = 0; k < 6; k++) add(`rx${ch}_xdp_tx_xmit_${k}`);
    }
    for (let p = 0; p < 8; p++) for (const f of ['bytes', 'packets', 'pause', 'pause_duration']) for (const dir of ['rx', 'tx']) add(`${dir}_prio${p}_${f}`);
    add('rx_bytes_phy', (1n << 53n) + 1n); // 9007199254740993: not representable as a JS number
    add('tx_bytes_phy', (1n << 64n) - 1n); // u64 max
    add('rx_corrected_bits_phy', 4671n);
    for (let l = 0; l < 4; l++) add(`rx_err_lane_${l}_phy`, BigInt(l * 1000 + 7));
    add('link_down_events_phy', 0n);
    const body = [...expected].map(([k, v]) => `     ${k}: ${v}`).join('\n');
    return { text: `NIC statistics:\n${body}\n`, expected };
  }

  it('keeps all ~1,500 counters exact, including values above 2^53 and u64 max', () => {
    const { text, expected } = generatedMlx5Dump();
    expect(expected.size).toBeGreaterThan(1400);
    const s = parseEthtoolStats(text);
    expect(new Map(Object.entries(s.counters))).toEqual(expected);
    expect(s.counters['rx_bytes_phy']).toBe(9007199254740993n);
    expect(Number(s.counters['rx_bytes_phy']) === 9007199254740992).toBe(true); // what a number parse would have said
    expect(s.counters['tx_bytes_phy']).toBe(18446744073709551615n);
    expect(s.lanes).toEqual([7n, 1007n, 2007n, 3007n]);
    const json = JSON.parse(JSON.stringify(s, bigintReplacer)) as { counters: Record<string, unknown> };
    expect(json.counters['rx_bytes_phy']).toBe('9007199254740993');
    expect(json.counters['rx_corrected_bits_phy']).toBe(4671);
  });
});

describe('parseEthtoolStats refuses garbage with a ParseError naming the line', () => {
  const head = 'NIC statistics:\n     rx_packets: 1\n';
  it.each([
    ['-1', '-1'],
    ['N/A', 'N/A'],
    ['2^64', '18446744073709551616'],
    ['hex', '0x10'],
    ['fraction', '1.5'],
  ])('value %s', (_label, v) => {
    const e = parseErr(`${head}     rx_bytes: ${v}\n`);
    expect(e.kind).toBe('ethtool-stats');
    expect(e.line).toBe(3);
    expect(e.reason).toContain('rx_bytes');
    expect(e.reason).toContain('not an unsigned 64-bit integer');
  });

  it('duplicate counter names', () => {
    const e = parseErr(`${head}     rx_bytes: 5\n     rx_packets: 2\n`);
    expect(e.line).toBe(4);
    expect(e.reason).toBe('counter rx_packets repeated (first on line 2)');
  });

  it('prose or a prompt line, with or without the header', () => {
    expect(parseErr(`${head}user@host:~$ ethtool -S eth0\n`).line).toBe(3);
    expect(parseErr('rx_err_lane_0_phy: 6\nthe other lanes were clean\n').line).toBe(2);
    expect(parseErr('no stats available\n').line).toBe(1);
  });

  it('a header that is not the first line, a blank line inside, or no counters at all', () => {
    expect(parseErr('     rx_packets: 1\nNIC statistics:\n').line).toBe(2);
    expect(parseErr(`${head}\n     rx_bytes: 5\n`).reason).toBe('blank line inside the counter list');
    expect(parseErr('NIC statistics:\n').reason).toContain('no counters');
    expect(parseErr('').line).toBe(1);
    expect(parseErr('\n\n').line).toBe(1);
  });

  it('a lane missing from the middle of rx_err_lane_N_phy (lanes would shift)', () => {
    const e = parseErr('rx_err_lane_0_phy: 1\nrx_err_lane_2_phy: 3\n');
    expect(e.line).toBe(2);
    expect(e.reason).toBe('rx_err_lane_2_phy present without rx_err_lane_1_phy');
  });

  it('accepts CRLF line ends and names that other drivers use', () => {
    const s = parseEthtoolStats('NIC statistics:\r\n     port.rx_bytes: 10\r\n     [0]: rx_ucast_packets: 4\r\n     __proto__: 3\r\n');
    expect(s.counters['port.rx_bytes']).toBe(10n);
    expect(s.counters['[0]: rx_ucast_packets']).toBe(4n);
    expect(Object.getOwnPropertyDescriptor(s.counters, '__proto__')?.value).toBe(3n);
  });
});

describe('property: only ParseError on any text', () => {
  it('random, truncated and mutated real samples', () => {
    fuzzParser(parseEthtoolStats, [gx10(), annotated100g(), cx4Stats()]);
  });
});
