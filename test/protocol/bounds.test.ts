import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { UsageError } from '../../src/domain/errors.js';
import { parseProtocol } from '../../src/protocol/load.js';
import { runCli } from '../helpers/cli.js';

// Every class of bad value, as a mutation of the shipped spark-burnin.json, and the one line it gets (exit 2): the
// field named by its JSON path, and what is allowed there. The bounds and why: docs/protocol.md.
const TEXT = readFileSync(join(import.meta.dirname, '..', '..', 'protocols', 'spark-burnin.json'), 'utf8');
type Doc = Record<string, any>;
const L = (p: Doc, rule: string): Doc => p.limits.find((l: Doc) => l.rule === rule);
const mutated = (edit: (p: Doc) => void): string => {
  const p = JSON.parse(TEXT) as Doc;
  edit(p);
  return JSON.stringify(p, null, 2);
};

// Each row: what is wrong, the mutation, the message after "x.json: ".
type Row = [string, (p: Doc) => void, string];

const BOUNDS: Row[] = [
  ['sampling 1e-9', (p) => (p.samplingIntervalS = 1e-9), 'samplingIntervalS: expected a number in [0.1, 60] (seconds between samples), got 1e-9'],
  ['sampling 3600', (p) => (p.samplingIntervalS = 3600), 'samplingIntervalS: expected a number in [0.1, 60] (seconds between samples), got 3600'],
  ['soak 1e308', (p) => (p.phases[6].durationS = 1e308), 'phases[6].durationS: expected a whole number in [1, 259200] (seconds of load), got 1e+308'],
  ['soak fraction', (p) => (p.phases[6].durationS = 600.5), 'phases[6].durationS: expected a whole number in [1, 259200] (seconds of load), got 600.5'],
  ['loopback 0.5', (p) => (p.phases[2].durationS = 0.5), 'phases[2].durationS: expected a whole number in [1, 3600] (seconds per rail), got 0.5'],
  ['ibwb 1e9', (p) => (p.phases[3].durationS = 1e9), 'phases[3].durationS: expected a number in [1, 3600] (seconds of load), got 1000000000'],
  ['nccl 0', (p) => (p.phases[4].durationS = 0), 'phases[4].durationS: expected a number in [1, 3600] (seconds of time budget), got 0'],
  ['preflight 1e6', (p) => (p.phases[0].durationS = 1e6), 'phases[0].durationS: expected a number in [1, 3600] (seconds of time budget), got 1000000'],
  ['msg 0', (p) => (p.phases[3].msgSize = 0), 'phases[3].msgSize: expected a whole number in [1, 8388608] (bytes), got 0'],
  ['msg 2^30', (p) => (p.phases[5].msgSize = 2 ** 30), 'phases[5].msgSize: expected a whole number in [1, 8388608] (bytes), got 1073741824'],
  ['msg 1.5', (p) => (p.phases[2].msgSize = 1.5), 'phases[2].msgSize: expected a whole number in [1, 8388608] (bytes), got 1.5'],
  ['floor 1000', (p) => (p.phases[2].floorGbps = 1000), 'phases[2].floorGbps: expected a number in (0, 200] (Gb/s per rail), got 1000'],
  ['gpu 0', (p) => (p.phases[6].gpuUtilMinPct = 0), 'phases[6].gpuUtilMinPct: expected a number in (0, 100] (percent), got 0'],
  ['crc fail 0', (p) => (L(p, 'crc-errors').fail = 0), 'limits[0].fail: expected a whole number in [1, 1000000] (errors), got 0'],
  ['crc fail 2.5', (p) => (L(p, 'crc-errors').fail = 2.5), 'limits[0].fail: expected a whole number in [1, 1000000] (errors), got 2.5'],
  ['linkdown 1e9', (p) => (L(p, 'link-down-events').fail = 1e9), 'limits[2].fail: expected a whole number in [1, 1000000] (events), got 1000000000'],
  ['fec fail 20', (p) => (L(p, 'fec-margin').fail = 20), 'limits[3].fail: expected a number in [0, 12] (decades), got 20'],
  ['fec marg -1', (p) => (L(p, 'fec-window').marginal = -1), 'limits[4].marginal: expected a number in [0, 12] (decades), got -1'],
  ['ratio fail 1', (p) => (L(p, 'lane-ratio').fail = 1), 'limits[5].fail: expected a number in (1, 1000000] (x, a ratio), got 1'],
  ['sum 1000', (p) => (L(p, 'ib-write-bw-sum').fail = 1000), 'limits[6].fail: expected a number in (0, 400] (Gb/s), got 1000'],
  ['lb 0', (p) => (L(p, 'loopback-floor').fail = 0), 'limits[7].fail: expected a number in (0, 200] (Gb/s), got 0'],
  ['gpu 150', (p) => (L(p, 'gpu-util-min').fail = 150), 'limits[8].fail: expected a number in (0, 100] (%), got 150'],
  [
    'mfloor 1',
    (p) => (L(p, 'lane-ratio').marginalFloorBer = 1),
    "limits[5].marginalFloorBer: expected a number in (0, 1) (BER: the worst lane's BER 95% lower bound must reach this before a ratio can make a cable MARGINAL), got 1",
  ],
  [
    'ffloor 0',
    (p) => (L(p, 'lane-ratio').failFloorBer = 0),
    'limits[5].failFloorBer: expected a number in (0, 1) (BER: ... and this before a ratio can FAIL it), got 0',
  ],
  [
    'windowS 1e9',
    (p) => (L(p, 'fec-window').windowS = 1e9),
    'limits[4].windowS: expected a number in (0, 86400] (s: length of the sliding window over the soaks), got 1000000000',
  ],
  [
    'holdS -1',
    (p) => (L(p, 'lane-ratio').holdS = -1),
    'limits[5].holdS: expected a number in [0, 86400] (s: how long a window must stay beyond a line before it counts), got -1',
  ],
  [
    'span 500',
    (p) => (L(p, 'lane-ratio').minSpanC = 500),
    'limits[5].minSpanC: expected a number in (0, 100] (\u00b0C: growth with temperature is judged only over at least this range of NIC temperature), got 500',
  ],
  [
    'grow 100',
    (p) => (L(p, 'lane-ratio').growingDecades = 100),
    'limits[5].growingDecades: expected a number in [0, 15] (decades: a ratio FAILs only a lane whose errors certainly grow this much from the coolest to the hottest third of the soak temperatures (a steady lane is MARGINAL at most)), got 100',
  ],
  ['keep 1e9', (p) => (p.earlyStop.keepSamplingS = 1e9), 'earlyStop.keepSamplingS: expected a number in [0, 3600] (seconds), got 1000000000'],
  [
    'ticks 1e6',
    (p) => (p.earlyStop.laneRatioConsecutiveTicks = 1e6),
    'earlyStop.laneRatioConsecutiveTicks: expected a whole number in [1, 3600] (ticks), got 1000000',
  ],
  ['gap 1e9', (p) => (p.maxSampleGapS = 1e9), 'maxSampleGapS: expected a number in (0, 3600] (seconds without a sample), got 1000000000'],
  ['thr 500', (p) => (p.regression.throughputPct = 500), 'regression.throughputPct: expected a number in [0, 100] (percent), got 500'],
  ['temp -1', (p) => (p.regression.tempC = -1), 'regression.tempC: expected a number in [0, 100] (°C), got -1'],
  ['berdec 100', (p) => (p.regression.berDecades = 100), 'regression.berDecades: expected a number in [0, 15] (decades), got 100'],
  [
    'nl cmd',
    (p) => (p.commands.gpuLoad = 'gpu_burn {durationS}\nreboot'),
    'commands.gpuLoad: expected one line without control characters (a newline would start a second command), got "gpu_burn {durationS}\\nreboot"',
  ],
  [
    'tab cmd',
    (p) => (p.commands.loopbackClient = p.commands.loopbackClient.replace(' ', '\t')),
    'commands.loopbackClient: expected one line without control characters (a newline would start a second command), got "ib_write_bw\\t-d {rdmaDevice} -p {tcp...',
  ],
  ['esc desc', (p) => (p.description = 'burn-in \u001b[2J'), 'description: expected text without control characters, got "burn-in \\u001b[2J"'],
  ['nul limit desc', (p) => (L(p, 'crc-errors').description = 'a\u0000b'), 'limits[0].description: expected text without control characters, got "a\\u0000b"'],
  [
    'long name',
    (p) => (p.name = 'a'.repeat(65)),
    'name: expected a name of lowercase letters, digits and dashes, at most 64, got "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...',
  ],
  [
    '33 phases',
    (p) => {
      for (let i = 0; i < 26; i++) p.phases.push({ name: `soak-${i}`, kind: 'soak', durationS: 10, gpuLoad: false });
    },
    'phases: expected at most 32 entries, got "33 entries"',
  ],
  [
    'long template',
    (p) => (p.commands.gpuLoad = 'gpu_burn {durationS} ' + 'x'.repeat(5000)),
    'commands.gpuLoad: expected a string of at most 4096 characters, got "gpu_burn {durationS} xxxxxxxxxxxxxxx...',
  ],
  [
    '65 load arguments',
    (p) => (p.commands.gpuLoad.args = [...Array(64).fill('-m'), '{durationS}']),
    'commands.gpuLoad.args: expected at most 64 entries, got "65 entries"',
  ],
  ['a load of the wrong type', (p) => (p.commands.gpuLoad = 5), 'commands.gpuLoad: expected a string or an object, got 5'],
  [
    '.. in the load program',
    (p) => (p.commands.gpuLoad.program = '/opt/../bin/gpu_burn'),
    'commands.gpuLoad.program: expected a program name or an absolute path (letters, digits, _ . + @ - and /), got "/opt/../bin/gpu_burn"',
  ],
  [
    '100 required files',
    (p) => (p.commands.gpuLoad.requires = Array(100).fill('/a')),
    'commands.gpuLoad.requires: expected at most 64 entries, got "100 entries"',
  ],
  [
    'newline in ncclRank',
    (p) => (p.commands.ncclRank = `${p.commands.ncclRank}\nreboot`),
    'commands.ncclRank: expected one line without control characters (a newline would start a second command), got "-np 1 -H {ip}:1 -x LD_LIBRARY_PATH -...',
  ],
];

// What the schema cannot say: the order phases need, and the numbers' limits on each other.
const SEMANTICS: Row[] = [
  [
    'soak before identity',
    (p) => {
      const [s] = p.phases.splice(6, 1);
      p.phases.splice(1, 0, s);
    },
    'phases[1].kind: expected an identity phase before soak (sampling starts when identity has read the EEPROM), got "soak"',
  ],
  [
    'identity first',
    (p) => {
      p.phases.splice(0, 2, p.phases[1], p.phases[0]);
    },
    'phases[0].kind: expected "preflight" first (every later phase uses the cage and rail addresses it finds), got "identity"',
  ],
  [
    'no preflight',
    (p) => void p.phases.splice(0, 1),
    'phases[0].kind: expected "preflight" first (every later phase uses the cage and rail addresses it finds), got "identity"',
  ],
  [
    'two preflights',
    (p) => void p.phases.splice(3, 0, { name: 'preflight-2', kind: 'preflight' }),
    'phases[3].kind: expected preflight once, as the first phase, got "preflight"',
  ],
  [
    'two identities',
    (p) => void p.phases.splice(3, 0, { name: 'identity-2', kind: 'identity' }),
    'phases[3].kind: expected identity once (sampling starts there), got "identity"',
  ],
  [
    'ibwb without loopback',
    (p) => void p.phases.splice(2, 1),
    'phases[2].kind: expected a loopback phase before ib_write_bw (its sum is graded only when loopback showed every rail fine), got "ib_write_bw"',
  ],
  [
    'no soak',
    (p) => void p.phases.splice(5, 2),
    'phases: expected at least one soak phase (the cable is graded on its soaks), got "preflight,identity,loopback,ib_write...',
  ],
  ['dup names', (p) => (p.phases[6].name = 'soak-idle'), 'phases[6].name: expected a name not used by an earlier phase, got "soak-idle"'],
  [
    'window < interval',
    (p) => {
      p.samplingIntervalS = 30;
      L(p, 'fec-window').windowS = 10;
    },
    'limits[4].windowS: expected a window of at least one sampling interval (30 s), got 10',
  ],
  [
    'too many ticks',
    (p) => {
      p.samplingIntervalS = 0.1;
      p.phases[6].durationS = 259200;
    },
    'samplingIntervalS: expected at most 300000 samples per node (load phases 259840 s / samplingIntervalS): raise samplingIntervalS or shorten the soaks, got "0.1 (2598400 samples)"',
  ],
  [
    'gap < 2 interval',
    (p) => {
      p.samplingIntervalS = 10;
      p.maxSampleGapS = 15;
    },
    'maxSampleGapS: expected a number of seconds >= 2 x samplingIntervalS (20), got 15',
  ],
];

function refusal(text: string): string {
  try {
    parseProtocol(text, 'x.json');
  } catch (e) {
    expect(e).toBeInstanceOf(UsageError);
    return (e as Error).message;
  }
  throw new Error('accepted');
}

describe('physical bounds: each class of bad value is one line naming the field', () => {
  it.each(BOUNDS)('%s', (_what, edit, message) => {
    const m = refusal(mutated(edit));
    expect(m).toBe(`x.json: ${message}`);
    expect(m).not.toMatch(/[\u0000-\u001f]/);
  });
});

describe('semantic checks: phase order and the numbers` limits on each other', () => {
  it.each(SEMANTICS)('%s', (_what, edit, message) => {
    expect(refusal(mutated(edit))).toBe(`x.json: ${message}`);
  });

  it('the shipped order passes; so does a protocol without NCCL or an idle soak', () => {
    expect(parseProtocol(TEXT, 'x.json').notes).toEqual([]);
    expect(
      parseProtocol(
        mutated((p) => p.phases.splice(4, 2)),
        'x.json',
      ).phases.map((x) => x.kind),
    ).toEqual(['preflight', 'identity', 'loopback', 'ib_write_bw', 'soak']);
  });
});

describe('a journal`s protocol is read to grade what was run: the same problems are noted, not refused', () => {
  it('a value out of range and a soak before identity load with a note each', () => {
    const text = mutated((p) => {
      L(p, 'crc-errors').fail = 0;
      const [s] = p.phases.splice(6, 1);
      p.phases.splice(1, 0, s);
    });
    const p = parseProtocol(text, 'journal', { lenient: true });
    expect(p.limits.find((l) => l.rule === 'crc-errors')!.fail).toBe(0);
    expect(p.notes).toEqual([
      'limits[0].fail: expected a whole number in [1, 1000000] (errors), got 0 (a new run would be refused; read as written to grade what was run)',
      'phases[1].kind: expected an identity phase before soak (sampling starts when identity has read the EEPROM), got "soak" (a new run would be refused; read as written to grade what was run)',
    ]);
  });

  it('a shape this version cannot read is still refused', () => {
    expect(() =>
      parseProtocol(
        mutated((p) => (p.phases[6].durationS = '60m')),
        'journal',
        { lenient: true },
      ),
    ).toThrow('journal: phases[6].durationS: expected a whole number in [1, 259200] (seconds of load), got "60m"');
  });
});

describe('through the CLI: exit 2 at load, before any node is touched', { timeout: 30_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'cq-bounds-'));
  const files: [string, (p: Doc) => void, string][] = [
    ['soak-first.json', (p) => p.phases.splice(1, 0, p.phases.splice(6, 1)[0]), 'soak-first.json: phases[1].kind: expected an identity phase before soak'],
    ['fast.json', (p) => (p.samplingIntervalS = 1e-9), 'fast.json: samplingIntervalS: expected a number in [0.1, 60] (seconds between samples), got 1e-9'],
    [
      'newline.json',
      (p) => (p.commands.gpuLoad = 'gpu_burn {durationS}\nreboot'),
      'newline.json: commands.gpuLoad: expected one line without control characters',
    ],
  ];
  for (const [name, edit] of files) writeFileSync(join(dir, name), mutated(edit));

  it.each(files)('%s', async (name, _edit, message) => {
    const r = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', name], { cwd: dir });
    expect(r.code, r.err).toBe(2);
    expect(r.err.startsWith(`cablequal: ${message}`)).toBe(true);
    expect(r.err.trimEnd().split('\n')).toHaveLength(1);
    expect(r.out).toBe('');
  });
});

describe('the protocols recorded in the compat journals are within today`s bounds and order', () => {
  const root = join(import.meta.dirname, '..', 'fixtures');
  const journals = ['journals-v1', 'journals-v2'].flatMap((d) =>
    readdirSync(join(root, d), { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => join(root, d, e.name, 'journal.jsonl.gz')),
  );

  it.each(journals.map((j) => [j.split('/').slice(-3, -1).join('/'), j]))('%s', (_name, path) => {
    // The first line only: the head of the file, inflated as far as it goes.
    const head = readFileSync(path).subarray(0, 64 * 1024);
    const first = gunzipSync(head, { finishFlush: constants.Z_SYNC_FLUSH }).toString('utf8').split('\n')[0]!;
    const start = JSON.parse(first) as { type: string; protocolText: string };
    expect(start.type).toBe('run-start');
    const p = parseProtocol(start.protocolText, 'journal', { lenient: true });
    expect(p.notes.filter((n) => n.includes('would be refused'))).toEqual([]);
  });
});
