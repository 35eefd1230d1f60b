import { describe, expect, it } from 'vitest';
import { parseRdmaLink } from '../../src/probes/rdma-link.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const parseError = parseErrorOf;

// No recorded `rdma link` output is in samples/. These are NOT recordings from a Spark: they are
// generated in the layout of iproute2's rdma/link.c (`link <dev>/<port> state ... physical_state ... netdev ...`); all
// generated in the iproute2 layout for the uncabled rails and an InfiniBand port.
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

describe('parseRdmaLink robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser(parseRdmaLink, [SPARK_CAGE0, IB_PORT]);
  });
});
