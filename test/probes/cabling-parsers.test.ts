// The parsers a cabling map reads with, over samples/ip-addr, samples/ping and samples/lldpctl (each constructed from
// its tool's source, as line 1 of each says).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/domain/errors.js';
import { parseIpJson } from '../../src/probes/ip-json.js';
import { parseLldpJson0 } from '../../src/probes/lldpctl.js';
import { parsePingReplied } from '../../src/probes/ping.js';

const body = (dir: string, file: string) =>
  readFileSync(join(import.meta.dirname, '..', '..', 'samples', dir, file), 'utf8')
    .split('\n')
    .slice(1)
    .join('\n');

describe('cabling parsers', () => {
  it('ip -j addr: name, MTU, state and the IPv4 address with its prefix', () => {
    expect(parseIpJson(body('ip-addr', 'iproute2-ip-j-addr-show-dev-constructed-from-source.txt'))).toEqual([
      { ifname: 'enp1s0f0np0', mtu: 1500, up: true, addresses: ['192.168.10.1/24'] },
    ]);
    expect(() => parseIpJson('{"ifname":1}')).toThrow(ParseError);
    expect(() => parseIpJson('[{"ifname":"x y\\n"}]')).toThrow(/no readable ifname/);
  });

  it('ping: replies counted from the statistics line, an unreachable host is no reply', () => {
    const [ok, bad] = body('ping', 'iputils-ping-I-reply-and-unreachable-constructed-from-source.txt')
      .split(/^\$ .*$/m)
      .slice(1);
    expect(parsePingReplied(ok!)).toBe(true);
    expect(parsePingReplied(bad!)).toBe(false);
    expect(parsePingReplied('ping: SO_BINDTODEVICE enp9s0: No such device\n')).toBe(false);
    expect(() => parsePingReplied('something else')).toThrow(ParseError);
  });

  it('lldpctl -f json0: the neighbour of each interface (system name, chassis, port id), untrusted text screened', () => {
    expect(parseLldpJson0(body('lldpctl', 'lldpd-json0-one-neighbour-constructed-from-source.txt'))).toEqual([
      { iface: 'enp1s0f1np1', chassisId: '0c:42:a1:00:00:01', system: 'sim-switch', port: 'swp1' },
    ]);
    const hostile = JSON.stringify({ lldp: [{ interface: [{ name: 'eth0', chassis: [{ name: [{ value: 'sw\u001b[31m' + 'x'.repeat(100) }] }], port: [] }] }] });
    const [n] = parseLldpJson0(hostile);
    expect(n!.system).toBe(`sw[31m${'x'.repeat(58)}`); // ESC dropped, 64 characters kept
    expect(n!.port).toBeNull();
    expect(() => parseLldpJson0('{"other":1}')).toThrow(/not `lldpctl -f json0` output/);
  });
});
