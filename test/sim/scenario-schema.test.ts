// #22 item 9: a scenario file given to --sim is checked against its JSON Schema at load (src/sim/scenario-schema.ts):
// a field out of what the model and the EEPROM encoder can hold is one line naming it, exit 2, before the lab starts
// (it used to run and end "harness error", exit 3). Every shipped scenario fits the schema.
import { mkdtempSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadScenario, SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { scenarioProblem } from '../../src/sim/scenario-schema.js';
import { runCli } from '../helpers/cli.js';

const dir = mkdtempSync(join(tmpdir(), 'cq-scen-'));
const good = () => JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as Record<string, any>;

type Case = [what: string, edit: (s: Record<string, any>) => void, message: string];
const CASES: Case[] = [
  [
    'a 300-character vendor name',
    (s) => void (s['cable'].eeprom.vendorName = 'V'.repeat(300)),
    'cable.eeprom.vendorName: expected printable ASCII, 1 to 16 characters (16 EEPROM bytes), got "VVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVV..."',
  ],
  [
    'a non-ASCII vendor name',
    (s) => void (s['cable'].eeprom.vendorName = 'Ämphenol'),
    'cable.eeprom.vendorName: expected printable ASCII, 1 to 16 characters (16 EEPROM bytes), got "Ämphenol"',
  ],
  ['a bad OUI', (s) => void (s['cable'].eeprom.vendorOui = '78:a7'), 'cable.eeprom.vendorOui: expected three hex bytes, xx:xx:xx, got "78:a7"'],
  [
    'attenuation 600 dB',
    (s) => void (s['cable'].eeprom.attenuationDb = [2, 3, 600, 6]),
    'cable.eeprom.attenuationDb[2]: expected a whole number of dB in [0, 255] (one EEPROM byte), got number 600',
  ],
  ['throughput as a string', (s) => void (s['throughput'].railGbps = '92.5'), 'throughput.railGbps: expected Gb/s in (0, 200], got a string'],
  [
    'an invalid rail IP',
    (s) => void (s['nodes'][0].railIps = ['192.168.100.300', '192.168.101.10']),
    'nodes[0].railIps[0]: expected a dotted IPv4 address, got "192.168.100.300"',
  ],
  [
    'a rail IP that is a host name',
    (s) => void (s['nodes'][1].railIps = ['192.168.100.11', 'spark-b']),
    'nodes[1].railIps[1]: expected a dotted IPv4 address, got "spark-b"',
  ],
  ['three rail IPs', (s) => void s['nodes'][0].railIps.push('10.0.0.1'), 'nodes[0].railIps: expected at most 2 items, got 3'],
  [
    'an unknown field (a typo)',
    (s) => void (s['thermal'].tauSeconds = 150),
    'thermal.tauSeconds: not allowed here (allowed: ambientC, linkLoadC, gpuLoadC, tauS)',
  ],
  ['a missing GPU figure', (s) => void delete s['gpu'].loadUtilPct, 'gpu.loadUtilPct: expected percent in [0, 100], got nothing (missing)'],
  ['a negative error rate', (s) => void (s['lanes'][0] = [[40, -1]]), 'lanes[0][0][1]: expected a number that must be >= 0, got number -1'],
  [
    'a node name with a shell character',
    (s) => void (s['nodes'][0].name = 'a;reboot'),
    'nodes[0].name: expected a host name (letters, digits, . _ -; at most 63), got "a;reboot"',
  ],
  // Issue #33 item 6: a curve out of order was read as a constant without a word; refused with the point named.
  [
    'a lane curve whose temperatures descend',
    (s) =>
      void (s['lanes'][2] = [
        [80, 1e3],
        [60, 1e2],
        [40, 10],
      ]),
    "lanes[2][1]: NIC temperature 60 after 80: a curve's points must be in increasing NIC temperature, each point once",
  ],
  [
    'a receiver curve with a temperature twice',
    (s) =>
      void (s['lanesByReceiver'] = {
        [s['nodes'][1].name]: [
          [[40, 1]],
          [[40, 1]],
          [
            [40, 1],
            [70, 5],
            [70, 9],
          ],
          [[40, 1]],
        ],
      }),
    "lanesByReceiver.spark-b[2][2]: NIC temperature 70 after 70: a curve's points must be in increasing NIC temperature, each point once",
  ],
  [
    'an uncorrectable curve out of order',
    (s) =>
      void (s['uncorrectablePerS'] = [
        [70, 0.1],
        [50, 0],
      ]),
    "uncorrectablePerS[1]: NIC temperature 50 after 70: a curve's points must be in increasing NIC temperature, each point once",
  ],
  [
    'burst points out of order',
    (s) =>
      void (s['burstBits'] = [
        [1e-5, 2],
        [1e-7, 1.5],
      ]),
    "burstBits[1]: pre-FEC BER 1e-7 after 0.00001: a curve's points must be in increasing pre-FEC BER, each point once",
  ],
];

describe('scenario files are checked against their JSON Schema at load', () => {
  it('every shipped scenario loads: its curves are in order', () => {
    for (const f of readdirSync(SCENARIOS_DIR).filter((x) => x.endsWith('.json'))) expect(loadScenario(f.slice(0, -5)).name, f).toBeTruthy();
  });

  it('every shipped scenario fits (one that extends another once the fields it takes are filled in)', () => {
    for (const f of readdirSync(SCENARIOS_DIR).filter((x) => x.endsWith('.json'))) {
      const raw = JSON.parse(readFileSync(join(SCENARIOS_DIR, f), 'utf8'));
      if (typeof raw.extends === 'string') expect(loadScenario(f.slice(0, -5)).name, f).toBe(raw.name);
      else expect(scenarioProblem(raw), f).toBeNull();
    }
  });

  it('a scenario that extends another is checked whole: a field it sets out of range is named', () => {
    const raw = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'dual-cage.json'), 'utf8'));
    const file = join(dir, 'bad-extends.json');
    writeFileSync(file, JSON.stringify({ ...raw, thermal: { ambientC: 500, linkLoadC: 8, gpuLoadC: 24, tauS: 90 } }));
    expect(() => loadScenario(file)).toThrow(/bad-extends\.json: thermal\.ambientC: expected degrees C in \[-20, 80\], got number 500/);
    writeFileSync(file, JSON.stringify({ ...raw, extends: 'no-such-scenario' }));
    expect(() => loadScenario(file)).toThrow(/unknown scenario "no-such-scenario"/);
  });

  for (const [what, edit, message] of CASES) {
    it(`${what}: exit 2, one line naming the field`, async () => {
      const s = good();
      edit(s);
      const file = join(dir, `${what.replace(/\W+/g, '-')}.json`);
      writeFileSync(file, JSON.stringify(s));
      const r = await runCli(['run', '--sim', file, '--protocol', 'quick', '--out', join(dir, 'out'), '--db', 'off']);
      expect(r.code).toBe(2);
      expect(r.err).toBe(`cablequal: ${file}: ${message}\n`);
    });
  }

  it('a scenario that is /dev/zero or nested 100,000 deep: one line', async () => {
    const zero = join(dir, 'zero.json');
    symlinkSync('/dev/zero', zero);
    const z = await runCli(['run', '--sim', zero, '--dry-run']);
    expect(z.code).toBe(2);
    expect(z.err).toBe(`cablequal: ${zero}: a device, not a regular file\n`);
    const deep = join(dir, 'deep.json');
    writeFileSync(deep, `{"name":${'['.repeat(100_000)}${']'.repeat(100_000)}}`);
    const d = await runCli(['run', '--sim', deep, '--dry-run']);
    expect(d.code).toBe(2);
    expect(d.err).toBe(`cablequal: ${deep}: nested deeper than 16 levels: not a scenario\n`);
  });
});
