import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseEthtoolLink } from '../../src/probes/ethtool-link.js';
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

// The playbook pastes hold two `$ sudo ethtool <if> | grep Speed` runs with prompts and a blank line between:
// split them at the prompt lines so each output is parsed on its own, as the harness would receive it.
function promptedRuns(rel: string): { iface: string; output: string }[] {
  const runs: { iface: string; output: string }[] = [];
  for (const line of sample(rel).split('\n')) {
    const prompt = /\$ sudo ethtool (\S+) \| grep Speed$/.exec(line);
    if (prompt) runs.push({ iface: prompt[1]!, output: '' });
    else if (line.trim() !== '') runs.at(-1)!.output += `${line}\n`;
  }
  return runs;
}

const lanesPatch = () => sample('ethtool-link/ethtool-lanes-patch-example-100g-4-lanes-partial.txt');

// CONSTRUCTED for this test from the docs/formats.md §3 layout (not a recording): a full non-root `ethtool <if>`
// with a multi-line supported-modes list and the interleaved permission notice.
const constructedNonRoot = [
  'Settings for enp1s0f0np0:',
  '\tSupported ports: [ Backplane ]',
  '\tSupported link modes:   1000baseKX/Full',
  '\t                        25000baseCR/Full',
  '\t                        100000baseCR4/Full',
  '\tSupported pause frame use: Symmetric',
  '\tSupports auto-negotiation: Yes',
  '\tSupported FEC modes: None\t RS\t BASER',
  '\tAdvertised link modes:  100000baseCR4/Full',
  '\tAdvertised FEC modes: RS',
  '\tLink partner advertised link modes:  Not reported',
  '\tSpeed: 200000Mb/s',
  '\tLanes: 4',
  '\tDuplex: Full',
  '\tAuto-negotiation: on',
  '\tPort: Direct Attach Copper',
  '\tPHYAD: 0',
  '\tTransceiver: internal',
  'netlink error: Operation not permitted',
  '        Current message level: 0x00000004 (4)',
  '                               link',
  '\tLink detected: yes',
  '\tLink Down Events: 3',
  '',
].join('\n');

const parseErr = (text: string) => parseErrorOf(() => parseEthtoolLink(text));

describe('parseEthtoolLink on real samples', () => {
  it('every sample in samples/ethtool-link keeps its # source line and is tested here', () => {
    const files = samplesIn('ethtool-link').sort();
    expect(files).toEqual([
      'ethtool-link/constructed-netlink-down-port-no-lanes-unknown-speed-duplex-modes-without-duplex.txt',
      'ethtool-link/dgx-spark-playbooks-switch-speed-100g-both-functions.txt',
      'ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt',
      'ethtool-link/ethtool-ext-state-cover-letter-examples-partial.txt',
      'ethtool-link/ethtool-lanes-patch-example-100g-4-lanes-partial.txt',
    ]);
    for (const f of files) expect(sampleSource(f)).toMatch(/^# source: /);
  });

  it('Spark behind a switch, before the fix: both functions of port 1 at 100000 Mb/s (grep Speed, no header)', () => {
    const runs = promptedRuns('ethtool-link/dgx-spark-playbooks-switch-speed-100g-both-functions.txt');
    expect(runs.map((r) => r.iface)).toEqual(['enp1s0f1np1', 'enP2p1s0f1np1']);
    for (const r of runs) {
      expect(r.output).toBe('\tSpeed: 100000Mb/s\n');
      const l = parseEthtoolLink(r.output);
      expect(l.speedMbps).toBe(100000);
      expect(l.iface).toBeNull();
      expect(l.lanes).toBeNull();
      expect(l.linkDetected).toBeNull();
      expect(l.supportedLinkModes).toEqual([]);
    }
  });

  it('Spark behind a switch, after pinning 200G: both functions at 200000 Mb/s', () => {
    const runs = promptedRuns('ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt');
    expect(runs.map((r) => r.iface)).toEqual(['enp1s0f1np1', 'enP2p1s0f1np1']);
    expect(runs.map((r) => parseEthtoolLink(r.output).speedMbps)).toEqual([200000, 200000]);
  });

  it('lanes-patch example (tail of the output, mixed space/TAB indent): 100G over 4 lanes on DAC, link up', () => {
    const l = parseEthtoolLink(lanesPatch());
    expect(l).toEqual({
      iface: null,
      speedMbps: 100000,
      lanes: 4,
      duplex: 'Full',
      port: 'Direct Attach Copper',
      autoNegotiation: true,
      linkDetected: true,
      linkDownReason: null,
      linkDownEvents: null, // ethtool of 2021 did not print it
      supportedLinkModes: [], // the supported list was cut from the published example
      notices: [],
    });
  });

  it('`cablequal parse ethtool-link` prints the JSON contract', async () => {
    const r = await parseViaCli('ethtool-link', 'samples/ethtool-link/ethtool-lanes-patch-example-100g-4-lanes-partial.txt');
    expect(r.err).toBe('');
    expect(r.code).toBe(0);
    const json = JSON.parse(r.out) as Record<string, unknown>;
    expect(json['speedMbps']).toBe(100000);
    expect(json['lanes']).toBe(4);
    expect(json['linkDetected']).toBe(true);
    expect(json['autoNegotiation']).toBe(true);
  });
});

describe('parseEthtoolLink on constructed full outputs', () => {
  it('reads a full non-root output: header, multi-line list, permission notice, Link Down Events', () => {
    const l = parseEthtoolLink(constructedNonRoot);
    expect(l.iface).toBe('enp1s0f0np0');
    expect(l.speedMbps).toBe(200000);
    expect(l.lanes).toBe(4);
    expect(l.linkDownEvents).toBe(3);
    expect(l.supportedLinkModes).toEqual(['1000baseKX/Full', '25000baseCR/Full', '100000baseCR4/Full']);
    expect(l.notices).toEqual(['netlink error: Operation not permitted']);
  });

  it('reads the same output merged through a pipe (2>&1): the stderr notice comes before the header', () => {
    const lines = constructedNonRoot.split('\n');
    const notice = lines.findIndex((l) => l.startsWith('netlink error'));
    const piped = [lines[notice]!, ...lines.filter((_l, i) => i !== notice)].join('\n');
    expect(parseEthtoolLink(piped)).toEqual(parseEthtoolLink(constructedNonRoot));
    expect(parseErr('\tSpeed: 1Mb/s\nnetlink error: Operation not permitted\nSettings for b:\n').line).toBe(3);
  });

  it('Speed: Unknown! and Duplex: Unknown! on a down link are null, link down with its reason is false', () => {
    const l = parseEthtoolLink(
      'Settings for enP2p1s0f1np1:\n\tSpeed: Unknown!\n\tDuplex: Unknown! (255)\n\tAuto-negotiation: off\n' +
        'Cannot get wake-on-lan settings: Operation not permitted\n\tLink detected: no (No cable)\n',
    );
    expect(l.speedMbps).toBeNull();
    expect(l.duplex).toBeNull();
    expect(l.autoNegotiation).toBe(false);
    expect(l.linkDetected).toBe(false);
    expect(l.linkDownReason).toBe('No cable');
    expect(l.notices).toEqual(['Cannot get wake-on-lan settings: Operation not permitted']);
  });

  // Constructed from ethtool's netlink/settings.c (linkstate_link_ext_state_print): " (<state>", then ", <substate>"
  // when the kernel gives one (a name, or its number when ethtool has none), then ")".
  it.each([
    ['no (Cable issue)', false, 'Cable issue'],
    ['no (Bad signal integrity, Large number of physical errors)', false, 'Bad signal integrity, Large number of physical errors'],
    ['no (Link training failure, KR frame lock not acquired)', false, 'Link training failure, KR frame lock not acquired'],
    ['no (12)', false, '12'],
    ['no (Autoneg, 9)', false, 'Autoneg, 9'],
    ['no', false, null],
    ['yes', true, null],
  ])('Link detected: %s reads %s with reason %s', (value, detected, reason) => {
    const l = parseEthtoolLink(`Settings for enp1s0f0np0:\n\tSpeed: Unknown!\n\tLink detected: ${value}\n`);
    expect(l.linkDetected).toBe(detected);
    expect(l.linkDownReason).toBe(reason);
  });

  it("the ext-state patch set's published examples (no cable; autoneg with its sub-state) read their reasons", () => {
    // The author's "..." elides the lines above; each run is the `Link detected` line alone.
    const runs = sample('ethtool-link/ethtool-ext-state-cover-letter-examples-partial.txt')
      .split('\n')
      .filter((l) => l.startsWith('Link detected:'));
    expect(runs.map((l) => parseEthtoolLink(`${l}\n`)).map((x) => [x.linkDetected, x.linkDownReason])).toEqual([
      [false, 'No cable'],
      [false, 'Autoneg, No partner detected'],
    ]);
  });

  it('a reason carrying control bytes is screened, a long one cut', () => {
    const l = parseEthtoolLink(`\tLink detected: no (Cable\u001b[2J issue${'x'.repeat(300)})\n`);
    expect(l.linkDownReason).toMatch(/^Cable\\x1b\[2J issuex+… \(\d+ chars\)$/);
    expect(parseErr('\tLink detected: no ()\n').reason).toContain('yes or no');
  });
});

// Issue #33 item 2: a mode list is data. The sample is constructed from ethtool's netlink/settings.c (its header says so).
const downPort = () => sample('ethtool-link/constructed-netlink-down-port-no-lanes-unknown-speed-duplex-modes-without-duplex.txt');

describe('parseEthtoolLink on what other drivers, kernels and ethtool builds print', () => {
  it('a down port: no Lanes line, Speed Unknown!, Duplex Unknown! (255), a mode without duplex suffix, the reason it is down', () => {
    expect(parseEthtoolLink(downPort())).toEqual({
      iface: 'eth2',
      speedMbps: null,
      lanes: null,
      duplex: null,
      port: 'FIBRE',
      autoNegotiation: true,
      linkDetected: false,
      linkDownReason: 'Cable issue',
      linkDownEvents: null,
      supportedLinkModes: ['1000baseKX/Full', '10000baseKR/Full', '10000baseR_FEC', '25000baseCR/Full', '25000baseSR/Full'],
      notices: [],
    });
  });

  it('a list continued with any mix of TABs and spaces, however many a paste kept', () => {
    const modes = ['1000baseKX/Full', '10000baseR_FEC', '100000baseCR4/Full', '200000baseCR4/Full'];
    for (const indent of ['\t                        ', '                                ', '\t\t\t\t', '\t', '  ', ' \t ']) {
      const text = `\tSupported link modes:   ${modes[0]}\n${modes
        .slice(1)
        .map((m) => `${indent}${m}`)
        .join('\n')}\n\tSpeed: 200000Mb/s\n`;
      expect(parseEthtoolLink(text).supportedLinkModes, JSON.stringify(indent)).toEqual(modes);
    }
    // Half and Full of one speed on one line (dump_link_modes's "old output format"), names a newer kernel has, BIT<n>.
    const text =
      '\tSupported link modes:   10baseT/Half 10baseT/Full\n\t                        800000baseCR8/Full 10baseT1S/Half\n\t                        BIT101\n\tSpeed: 10Mb/s\n';
    expect(parseEthtoolLink(text).supportedLinkModes).toEqual(['10baseT/Half', '10baseT/Full', '800000baseCR8/Full', '10baseT1S/Half', 'BIT101']);
  });

  it('"Not reported" in any list is no mode', () => {
    const text =
      '\tSupported link modes:   Not reported\n\tAdvertised link modes:  Not reported\n\tAdvertised FEC modes: Not reported\n' +
      '\tLink partner advertised link modes:  Not reported\n\tLink partner advertised FEC modes: Not reported\n\tSpeed: Unknown!\n';
    const l = parseEthtoolLink(text);
    expect(l.supportedLinkModes).toEqual([]);
    expect(l.speedMbps).toBeNull();
    expect(parseEthtoolLink('\tSupported link modes:   100000baseCR4/Full Not reported\n\tSpeed: 1Mb/s\n').supportedLinkModes).toEqual(['100000baseCR4/Full']);
  });

  it('Port and Link detected as print_enum and linkstate_reply_cb print an unknown value', () => {
    const l = parseEthtoolLink('\tPort: Unknown! (7)\n\tLink detected: no (5, 12)\n');
    expect(l.port).toBeNull();
    expect(l.linkDetected).toBe(false);
    expect(l.linkDownReason).toBe('5, 12');
    expect(parseEthtoolLink('\tLink detected: no (Bad signal integrity, Large number of physical errors)\n').linkDownReason).toBe(
      'Bad signal integrity, Large number of physical errors',
    );
  });
});

describe('parseEthtoolLink refuses garbage with a ParseError naming the line', () => {
  it('text without any known setting', () => {
    expect(parseErr('').reason).toContain('no ethtool link setting');
    expect(parseErr('netlink error: No such device\n').reason).toContain('no ethtool link setting');
    expect(parseErr('\tNote: this is prose\n').reason).toContain('no ethtool link setting');
    expect(parseErr('Settings for eth0:\n').line).toBe(1);
  });

  it('a line that is neither header, setting, continuation nor notice', () => {
    const e = parseErr('\tSpeed: 200000Mb/s\nnvidia@spark:~$ sudo ethtool eth0\n');
    expect(e.line).toBe(2);
    expect(e.reason).toContain('not a "Key: value"');
  });

  it('an author\'s unindented "a: b" sentence next to real settings', () => {
    const e = parseErr('\tSpeed: 200000Mb/s\nResult: the link is fine\n');
    expect(e.line).toBe(2);
    expect(e.reason).toBe('not an ethtool setting: "Result: the link is fine"');
    // A known key whose TAB was lost in a paste is still read.
    expect(parseEthtoolLink('Speed: 200000Mb/s\nLink detected: yes\n').speedMbps).toBe(200000);
  });

  it('known keys with values of the wrong shape', () => {
    expect(parseErr('\tSpeed: 200 Gb/s\n').reason).toBe('Speed: "200 Gb/s" is not NNNMb/s or Unknown!');
    expect(parseErr('\tSpeed: 200000Mb/s\n\tLanes: four\n').line).toBe(2);
    expect(parseErr('\tLink detected: maybe\n').reason).toContain('yes or no');
    expect(parseErr('\tAuto-negotiation: Yes\n').reason).toContain('on or off');
    expect(parseErr('\tLink Down Events: -1\n').reason).toContain('a count');
  });

  it('two interfaces in one text, or a repeated key', () => {
    expect(parseErr('\tSpeed: 100000Mb/s\n\tSpeed: 100000Mb/s\n').reason).toBe('"Speed" repeated (first on line 1)');
    expect(parseErr('Settings for a:\n\tSpeed: 1Mb/s\nSettings for b:\n').line).toBe(3);
  });

  it('a continuation with no list above it, or a garbled link mode', () => {
    expect(parseErr('                                100000baseCR4/Full\n\tSpeed: 1Mb/s\n').line).toBe(1);
    const e = parseErr('\tSupported link modes:   100000baseCR4/Full\n\t                        N/A\n\tSpeed: 1Mb/s\n');
    expect(e.line).toBe(2);
    expect(e.reason).toContain('is not a link mode');
  });
});

describe('property: a mode list is data', () => {
  it('any mode names (a digit in each, with or without a duplex suffix), any continuation indent, "Not reported" anywhere: read back in order', () => {
    const mode = fc
      .tuple(fc.integer({ min: 1, max: 1_600_000 }), fc.stringMatching(/^[A-Za-z0-9_]{1,12}$/), fc.constantFrom('', '/Full', '/Half'))
      .map(([speed, media, duplex]) => `${speed}base${media}${duplex}`);
    const indent = fc.stringMatching(/^[ \t]{1,34}$/);
    fc.assert(
      fc.property(
        fc.array(fc.array(mode, { minLength: 1, maxLength: 3 }), { minLength: 1, maxLength: 6 }),
        fc.array(indent, { minLength: 6, maxLength: 6 }),
        fc.boolean(),
        (lines, indents, nr) => {
          const [first, ...more] = lines.map((l) => l.join(' '));
          const text = [
            `\tSupported link modes:   ${first}${nr ? ' Not reported' : ''}`,
            ...more.map((l, i) => `${indents[i]}${l}`),
            '\tSpeed: 200000Mb/s',
            '',
          ].join('\n');
          expect(parseEthtoolLink(text).supportedLinkModes).toEqual(lines.flat());
        },
      ),
      { numRuns: 200 },
    );
  });
});

describe('property: only ParseError on any text', () => {
  it('random, truncated and mutated real samples', () => {
    const runs = [
      ...promptedRuns('ethtool-link/dgx-spark-playbooks-switch-speed-100g-both-functions.txt'),
      ...promptedRuns('ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt'),
    ].map((r) => r.output);
    fuzzParser(parseEthtoolLink, [lanesPatch(), downPort(), ...runs]);
  });
});
