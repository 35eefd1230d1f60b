import { describe, expect, it } from 'vitest';
import { parseRdmaLink, railLinksOfRdma } from '../../src/probes/rdma-link.js';
import { sample, sampleSource } from '../helpers/samples.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const parseError = parseErrorOf;

// No recorded output of the newer layout is in samples/ (docs/formats.md §7 keeps one aside). These are NOT recordings
// from a Spark: they are generated in the layout of iproute2's rdma/link.c (`link <dev>/<port> state ... physical_state
// ... netdev ...`) for the uncabled rails and an InfiniBand port.
const SPARK_CAGE0 =
  'link rocep1s0f0/1 state ACTIVE physical_state LINK_UP netdev enp1s0f0np0\n' + 'link rocep1s0f1/1 state DOWN physical_state DISABLED netdev enp1s0f1np1\n';
const IB_PORT = 'link mlx5_0/1 subnet_prefix fe80:0000:0000:0000 lid 3 sm_lid 1 lmc 0 state ACTIVE physical_state LINK_UP\n';

describe('parseRdmaLink', () => {
  it('reads the documented RoCE line and a Down rail', () => {
    expect(parseRdmaLink(SPARK_CAGE0).links).toEqual([
      {
        rdmaDevice: 'rocep1s0f0',
        port: 1,
        state: 'ACTIVE',
        physicalState: 'LINK_UP',
        netdev: 'enp1s0f0np0',
        attributes: { state: 'ACTIVE', physical_state: 'LINK_UP', netdev: 'enp1s0f0np0' },
      },
      {
        rdmaDevice: 'rocep1s0f1',
        port: 1,
        state: 'DOWN',
        physicalState: 'DISABLED',
        netdev: 'enp1s0f1np1',
        attributes: { state: 'DOWN', physical_state: 'DISABLED', netdev: 'enp1s0f1np1' },
      },
    ]);
  });

  it('reads an InfiniBand port without netdev, keeping lid and subnet prefix as attributes', () => {
    const [link] = parseRdmaLink(IB_PORT).links;
    expect(link).toMatchObject({ rdmaDevice: 'mlx5_0', port: 1, state: 'ACTIVE', physicalState: 'LINK_UP', netdev: null });
    expect(link!.attributes['lid']).toBe('3');
    expect(link!.attributes['subnet_prefix']).toBe('fe80:0000:0000:0000');
  });

  it('returns no links for empty output and rejects other text with its line', () => {
    expect(parseRdmaLink('\n').links).toEqual([]);
    expect(parseError(() => parseRdmaLink(SPARK_CAGE0 + 'rdma: Unknown device\n')).line).toBe(3);
    expect(parseError(() => parseRdmaLink('link rocep1s0f0/1 state\n')).reason).toMatch(/pairs/);
    expect(parseError(() => parseRdmaLink('link rocep1s0f0/1 physical_state LINK_UP\n')).reason).toMatch(/no "state"/);
    expect(parseError(() => parseRdmaLink('link rocep1s0f0 state ACTIVE\n')).line).toBe(1);
    expect(parseRdmaLink('link x/1 constructor y state ACTIVE\n').links[0]!.attributes['constructor']).toBe('y');
  });
});

// The older layout, recorded: MLNX_OFED 4.7's rdma tool on a host with iWARP (i40iw) and ConnectX-4 ports. The paste
// starts with the author's `rdma link` command line, which the harness never sees.
const OAP = 'rdma-link/oap-rpmem-shuffle-mlnx-ofed-4.7-older-index-layout-partial.txt';
const oap = () =>
  sample(OAP)
    .split('\n')
    .filter((l) => l !== 'rdma link')
    .join('\n');

describe('parseRdmaLink on the older "<index>/<port>: <dev>/<port>:" layout', () => {
  it('reads the recorded MLNX_OFED 4.7 output: device index, ports without netdev, physical_state NOP', () => {
    expect(sampleSource(OAP)).toMatch(/^# source: GitHub Intel-bigdata\/OAP/);
    const r = parseRdmaLink(oap());
    expect(r.layout).toBe('index-prefix');
    expect(r.links.map((l) => [l.deviceIndex, l.rdmaDevice, l.port, l.state, l.physicalState, l.netdev])).toEqual([
      [0, 'i40iw0', 1, 'DOWN', 'NOP', null],
      [1, 'i40iw1', 1, 'ACTIVE', 'NOP', null],
      [2, 'mlx5_0', 1, 'DOWN', 'DISABLED', 'ens803f0'],
      [3, 'mlx5_1', 1, 'ACTIVE', 'LINK_UP', 'ens803f1'],
    ]);
    expect(r.links[3]!.attributes).toEqual({ state: 'ACTIVE', physical_state: 'LINK_UP', netdev: 'ens803f1' });
  });

  it('says the layout of the newer output, and none for an empty one', () => {
    expect(parseRdmaLink(SPARK_CAGE0).layout).toBe('link-keyword');
    expect(parseRdmaLink(SPARK_CAGE0).links[0]!.deviceIndex).toBeUndefined();
    expect(parseRdmaLink('').layout).toBeUndefined();
  });

  it('refuses the two layouts in one text and a port that differs before and after the device', () => {
    const mixed = `${oap()}\n${SPARK_CAGE0}`;
    const e = parseError(() => parseRdmaLink(mixed));
    expect(e.line).toBe(6); // the sample's four ports, its last line end, then the first newer line
    expect(e.reason).toBe("a link-keyword line, but line 1 was index-prefix: one rdma tool's output per text");
    expect(parseError(() => parseRdmaLink('2/1: mlx5_0/2: state ACTIVE\n')).reason).toBe('port 1 before the device and 2 after it differ');
  });

  it('gives the ports with a netdev to cage discovery as ibdev2netdev would: Up only ACTIVE with the link up', () => {
    expect(railLinksOfRdma(parseRdmaLink(oap()))).toEqual([
      { rdmaDevice: 'mlx5_0', port: 1, netdev: 'ens803f0', state: 'Down' },
      { rdmaDevice: 'mlx5_1', port: 1, netdev: 'ens803f1', state: 'Up' },
    ]);
    expect(railLinksOfRdma(parseRdmaLink(SPARK_CAGE0)).map((l) => l.state)).toEqual(['Up', 'Down']);
  });
});

describe('parseRdmaLink robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser(parseRdmaLink, [SPARK_CAGE0, IB_PORT, oap()]);
  });
});
