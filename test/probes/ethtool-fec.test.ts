import { describe, expect, it } from 'vitest';
import { bigintReplacer } from '../../src/domain/u64.js';
import { parseEthtoolFec } from '../../src/probes/ethtool-fec.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { sample, sampleSource, samplesIn } from '../helpers/samples.js';
import { parseErrorOf } from '../helpers/parse-error.js';

// The pastes carry shell prompt lines (` # ethtool ...`, `user@host:~$ ...`) around the output: drop them,
// and keep only what followed the last `--show-fec` command (the set-fec paste runs `--set-fec` first).
function outputOf(rel: string): string {
  const lines = sample(rel).split('\n');
  const isPrompt = (l: string) => /^ # ethtool |^\S+@\S+:\S*\$ ?/.test(l);
  const lastShow = lines.findLastIndex((l) => isPrompt(l) && l.includes('--show-fec'));
  return lines
    .slice(lastShow + 1)
    .filter((l) => !isPrompt(l))
    .join('\n');
}

const MOCK_513 = 'ethtool-fec/ethtool-5.13-fec-stats-per-lane-netdevsim-mock.txt';
const HIST_619 = 'ethtool-fec/ethtool-6.19-patch-example-fec-histogram-not-mlx5.txt';
const SPARK_RS = 'ethtool-fec/spark-fb97-set-fec-rs-then-show.txt';
const SPARK_NONE = 'ethtool-fec/spark-fb97-show-fec-auto-none-direct-dac.txt';

const parseErr = (text: string) => parseErrorOf(() => parseEthtoolFec(text));

describe('parseEthtoolFec on real samples', () => {
  it('every sample in samples/ethtool-fec keeps its # source line and is tested here', () => {
    const files = samplesIn('ethtool-fec').sort();
    expect(files).toEqual([MOCK_513, HIST_619, SPARK_RS, SPARK_NONE]);
    for (const f of files) expect(sampleSource(f)).toMatch(/^# source: /);
  });

  it('DGX Spark after re-cabling a direct DAC: configured Auto, Active FEC encoding: None, no statistics', () => {
    expect(outputOf(SPARK_NONE)).toBe('FEC parameters for enp1s0f0np0:\nSupported/Configured FEC encodings: Auto\nActive FEC encoding: None\n');
    expect(parseEthtoolFec(outputOf(SPARK_NONE))).toEqual({
      iface: 'enp1s0f0np0',
      configured: ['Auto'],
      active: 'None',
      stats: null,
    });
  });

  it('DGX Spark after --set-fec encoding rs: RS configured and active', () => {
    expect(parseEthtoolFec(outputOf(SPARK_RS))).toEqual({
      iface: 'enp1s0f0np0',
      configured: ['RS'],
      active: 'RS',
      stats: null,
    });
  });

  it('ethtool 5.13 layout (old "Configured FEC encodings:" label, "Lane N:" lines; netdevsim mock values)', () => {
    const f = parseEthtoolFec(outputOf(MOCK_513));
    expect(f.iface).toBe('eth0');
    expect(f.configured).toEqual(['None']);
    expect(f.active).toBe('None');
    expect(f.stats).toEqual({
      correctedBlocks: 256n,
      uncorrectableBlocks: 145n,
      correctedBits: null, // not printed by this driver
      perLane: { correctedBlocks: [255n, 1n], uncorrectableBlocks: [128n, 17n] },
    });
  });

  it('ethtool 6.19 layout: inline [ per_lane: ... ] and histogram bins (patch example, not mlx5)', () => {
    const f = parseEthtoolFec(outputOf(HIST_619));
    expect(f.iface).toBe('eni8np1');
    expect(f.configured).toEqual(['None']);
    expect(f.stats).toEqual({
      correctedBlocks: 123n,
      uncorrectableBlocks: 4n,
      correctedBits: null,
      histogram: [
        { bin: '0', total: 445n, perLane: [125n, 120n, 100n, 100n] },
        { bin: '1_to_3', total: 12n },
        { bin: '4_to_7', total: 2n },
      ],
    });
  });

  it('bigints survive the JSON contract (numbers up to 2^53)', () => {
    const json = JSON.parse(JSON.stringify(parseEthtoolFec(outputOf(MOCK_513)), bigintReplacer)) as {
      stats: { correctedBlocks: unknown; perLane: { uncorrectableBlocks: unknown } };
    };
    expect(json.stats.correctedBlocks).toBe(256);
    expect(json.stats.perLane.uncorrectableBlocks).toEqual([128, 17]);
  });
});

describe('parseEthtoolFec on texts DERIVED from the samples (edited, not recorded)', () => {
  it('a total printed without its newline (ethtool >= 6.19 glitch, docs/formats.md §2) is read as two statistics', () => {
    // Derived: the 6.19 example with the newline after "corrected_blocks: 123" removed.
    const glued = outputOf(HIST_619).replace('corrected_blocks: 123\n', 'corrected_blocks: 123');
    expect(glued).toContain('corrected_blocks: 123  uncorrectable_blocks: 4\n');
    const f = parseEthtoolFec(glued);
    expect(f.stats?.correctedBlocks).toBe(123n);
    expect(f.stats?.uncorrectableBlocks).toBe(4n);
    expect(f.stats?.histogram?.map((h) => h.bin)).toEqual(['0', '1_to_3', '4_to_7']);
  });

  it('the merged 6.19 source spelling fec_symbols_err_ and an RS-style totals-only block with corrected_bits', () => {
    // Constructed in the shape docs/formats.md §2 gives for mlx5 in RS mode (totals only, corrected_bits present).
    const text =
      'FEC parameters for enp1s0f0np0:\nSupported/Configured FEC encodings: Auto RS\nActive FEC encoding: RS\nStatistics:\n' +
      '  corrected_blocks: 9007199254740993\n  uncorrectable_blocks: 0\n  corrected_bits: 4671\n  fec_symbols_err_0: 7\n';
    const f = parseEthtoolFec(text);
    expect(f.configured).toEqual(['Auto', 'RS']);
    expect(f.stats).toEqual({
      correctedBlocks: 9007199254740993n,
      uncorrectableBlocks: 0n,
      correctedBits: 4671n,
      histogram: [{ bin: '0', total: 7n }],
    });
  });
});

describe('parseEthtoolFec refuses garbage with a ParseError naming the line', () => {
  const head = 'FEC parameters for eth0:\nSupported/Configured FEC encodings: Auto\nActive FEC encoding: RS\n';

  it('missing or wrong header lines', () => {
    expect(parseErr('').line).toBe(1);
    expect(parseErr('netlink error: Operation not supported\n').line).toBe(1);
    expect(parseErr('FEC parameters for eth0:\n').reason).toContain('the configured FEC encodings');
    expect(parseErr('FEC parameters for eth0:\nActive FEC encoding: RS\n').line).toBe(2);
    expect(parseErr('FEC parameters for eth0:\nConfigured FEC encodings: RS\n').reason).toContain('active');
  });

  it('encodings that are not ethtool FEC names, or not exactly one active', () => {
    expect(parseErr('FEC parameters for eth0:\nConfigured FEC encodings: N/A\nActive FEC encoding: RS\n').reason).toBe('"N/A" is not an FEC encoding');
    expect(parseErr('FEC parameters for eth0:\nConfigured FEC encodings:\nActive FEC encoding: RS\n').line).toBe(2);
    expect(parseErr('FEC parameters for eth0:\nConfigured FEC encodings: RS\nActive FEC encoding:\n').line).toBe(3);
    expect(parseErr('FEC parameters for eth0:\nConfigured FEC encodings: RS\nActive FEC encoding: RS BaseR\n').line).toBe(3);
  });

  it('statistics: bad values, unknown names, repeats, misplaced lanes, empty section', () => {
    expect(parseErr(`${head}Statistics:\n  corrected_blocks: -1\n`).reason).toBe('corrected_blocks: "-1" is not an unsigned 64-bit integer');
    expect(parseErr(`${head}Statistics:\n  corrected_blocks: 18446744073709551616\n`).line).toBe(5);
    expect(parseErr(`${head}Statistics:\n  constructor: 1\n`).reason).toBe('unknown FEC statistic constructor');
    expect(parseErr(`${head}Statistics:\n  corrected_blocks: 1\n  corrected_blocks: 1\n`).line).toBe(6);
    expect(parseErr(`${head}Statistics:\n    Lane 0: 1\n`).reason).toBe('"Lane N:" before any statistic');
    expect(parseErr(`${head}Statistics:\n  corrected_blocks: 2\n    Lane 1: 1\n`).reason).toContain('Lane 1 where Lane 0');
    expect(parseErr(`${head}Statistics:\n  corrected_blocks: 2 [ per_lane: 1, 1 ]\n    Lane 0: 1\n`).line).toBe(6);
    expect(parseErr(`${head}Statistics:\n  corrected_blocks: 2 [ per_lane: 1, N/A ]\n`).reason).toContain('per_lane[1]');
    expect(parseErr(`${head}Statistics:\n`).reason).toContain('no statistic');
    expect(parseErr(`${head}Statistics:\n  fec_symbol_err_0: 1\n  fec_symbols_err_0: 1\n`).reason).toBe('histogram bin 0 repeated');
  });

  it('anything after the active line other than Statistics:, such as a trailing prompt', () => {
    const e = parseErr(`${head}user@spark:~$ \n`);
    expect(e.line).toBe(4);
  });
});

describe('property: only ParseError on any text', () => {
  it('random, truncated and mutated real samples', () => {
    fuzzParser(parseEthtoolFec, [MOCK_513, HIST_619, SPARK_RS, SPARK_NONE].map(outputOf));
  });
});
