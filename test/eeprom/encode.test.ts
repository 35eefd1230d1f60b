import { describe, expect, it } from 'vitest';
import { cmisLengthM } from '../../src/eeprom/cmis.js';
import { encodeCmis, encodeCmisLength, encodeSff8636, formatEthtoolModuleText, formatHexDump, type EepromFields } from '../../src/eeprom/encode.js';
import { parseEepromHex } from '../../src/probes/eeprom-hex.js';
import { readHexDump } from '../../src/eeprom/hex-rows.js';
import { sample } from '../helpers/samples.js';

// Mail archives show TABs expanded to 8-column stops and drop trailing spaces; do the same to our output.
const asPasted = (s: string): string =>
  s
    .split('\n')
    .map((l) => {
      let out = '';
      for (const ch of l) out += ch === '\t' ? ' '.repeat(8 - (out.length % 8)) : ch;
      return out.trimEnd();
    })
    .join('\n');

const sum = (img: Uint8Array, from: number, to: number): number => img.slice(from, to + 1).reduce((a, b) => a + b, 0) % 256;

const base: EepromFields = {
  vendorName: 'Mellanox',
  vendorOui: '00:02:c9',
  vendorPn: 'MCP1650-V001E30',
  vendorRev: 'A3',
  vendorSn: 'MT2301VS01234',
  dateCode: '230115',
  lengthM: 1,
  attenuationDb: {},
};

describe('formatHexDump matches real ethtool dumps byte for byte', () => {
  it('reproduces the 512-byte SFP dump (real TABs; trailing spaces lost in the archive)', () => {
    const real = sample('ethtool-module-hex/sfp-mikrotik-aoc-amd-xgbe-512B-hex.txt').split('\n').slice(1).join('\n');
    const bytes = readHexDump(real).bytes as number[];
    const ours = formatHexDump(bytes);
    expect(ours.startsWith('Offset\t\tValues\n------\t\t------\n0x0000:\t\t03 04 21 00 ')).toBe(true);
    expect(ours.endsWith('0x01f0:\t\t00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 \n')).toBe(true);
    expect(ours.replace(/ \n/g, '\n')).toBe(real);
  });

  it('labels a partial read with its start offset (the patched ice `offset 0x90 length 12` read)', () => {
    const real = sample('ethtool-module-hex/qsfp28-dac-ice-patched-offset-0x90-reads.txt').split('\n').slice(6).join('\n');
    const ours = formatHexDump([0x00, 0x00, 0x01, 0xa0, 0x4d, 0x65, 0x6c, 0x6c, 0x61, 0x6e, 0x6f, 0x78], 0x90);
    expect(asPasted(ours)).toBe(real);
  });

  it('answers the harness page reads for an encoded image (lower + upper page 00h parse back)', () => {
    const img = encodeSff8636(base);
    const upper = formatHexDump(img.subarray(128, 256), 128);
    expect(upper.split('\n')[2]).toBe(`0x0080:\t\t11 00 23 00 00 00 00 00 00 00 00 08 ff 00 00 00 `);
    expect(parseEepromHex(formatHexDump(img.subarray(0, 128), 0) + upper).vendorSn).toBe('MT2301VS01234');
  });

  it('starts a new row every 16 bytes counted from the start offset', () => {
    expect(
      formatHexDump(
        Array.from({ length: 18 }, (_, i) => i),
        0x80,
      ),
    ).toBe('Offset\t\tValues\n------\t\t------\n0x0080:\t\t00 01 02 03 04 05 06 07 08 09 0a 0b 0c 0d 0e 0f \n0x0090:\t\t10 11 \n');
  });
});

describe('formatEthtoolModuleText imitates real ethtool text', () => {
  it('ethtool 7.0 style equals the real new-label OEM 3 m DAC output, bug included', () => {
    const real = sample('ethtool-module/qsfp28-dac-oem-3m-new-ethtool-labels-attenuation-bug.txt');
    const img = encodeSff8636({
      revision: 0x07,
      vendorName: 'OEM',
      vendorOui: '00:00:00',
      vendorPn: 'AB9989-33424C00-',
      vendorRev: 'E',
      vendorSn: 'HQ21010600009',
      dateCode: '210107',
      lengthM: 3,
      attenuationDb: { '2.5GHz': 5, '5.0GHz': 7, '7.0GHz': 9, '12.9GHz': 11 }, // 188/189 unknown for the real cable
      extendedCompliance: 0x0b,
      encoding: 0x00,
      nominalRateGBd: 25.5,
    });
    expect(asPasted(formatEthtoolModuleText(img, { style: '7.0' }))).toBe(real);
  });

  it('ethtool 6.7 style equals the first 22 lines of the real old-label ice DAC output', () => {
    const real = sample('ethtool-module/qsfp28-25g-dac-ice-decoded-old-labels-partial.txt').split('\n').slice(1, 23);
    const img = encodeSff8636({
      ...base,
      attenuationDb: { '2.5GHz': 4, '5.0GHz': 5, '7.0GHz': 7, '12.9GHz': 10 },
      compliance: 0x08,
      extendedCompliance: 0x0d,
      encoding: 0x05,
      nominalRateGBd: 25.5,
    });
    const ours = formatEthtoolModuleText(img, { style: '6.7' }).replaceAll('\t', '    ').split('\n').slice(0, 22);
    expect(ours).toEqual(real);
  });

  it('CMIS lines use the labels and number formats of the real Arista (6.x) output', () => {
    const real = sample('ethtool-module/cmis-qsfpdd-optical-arista-xdr4-ethtool6x-partial.txt').split('\n');
    const img = encodeCmis({ ...base, identifier: 0x18, revision: 0x40, lengthM: null, transmitterTechnology: 0x6 });
    const ours = formatEthtoolModuleText(img, { style: '6.7' }).split('\n');
    for (const label of ['Cable assembly length', 'Revision compliance', 'Module State', 'LowPwrAllowRequestHW', 'LowPwrRequestSW']) {
      const want = real.find((l) => l.startsWith(label))!;
      expect(ours).toContain(`\t${want}`);
    }
    expect(ours).toContain('\tTransmitter technology                    : 0x06 (1310 nm EML)');
    expect(ours.some((l) => l.includes('Attenuation'))).toBe(false);
  });

  it('pads every label to 41 characters after one TAB', () => {
    for (const style of ['6.7', '7.0'] as const) {
      for (const img of [encodeSff8636(base), encodeCmis(base)]) {
        const lines = formatEthtoolModuleText(img, { style }).trimEnd().split('\n');
        for (const l of lines) expect(l).toMatch(/^\t[A-Za-z(][^\t]{40} : /);
      }
    }
  });

  it('refuses an identifier it has no text layout for', () => {
    const img = encodeSff8636(base);
    img[0] = 0x03;
    expect(() => formatEthtoolModuleText(img, { style: '6.7' })).toThrow(/identifier 0x03 is neither SFF-8636 nor CMIS/);
  });
});

describe('encoders write real images', () => {
  it('SFF-8636: fields at their offsets, CC_BASE and CC_EXT valid', () => {
    const img = encodeSff8636({ ...base, attenuationDb: { '2.5GHz': 4, '25.8GHz': 9 }, extendedCompliance: 0x40, nominalRateGBd: 53.25 });
    expect(img.length).toBe(256);
    expect([img[0], img[128], img[131], img[146], img[147], img[186], img[145], img[192], img[140], img[222]]).toEqual([
      0x11, 0x11, 0x80, 1, 0xa0, 4, 9, 0x40, 0xff, 0xd5,
    ]);
    expect(Buffer.from(img.subarray(148, 164)).toString('latin1')).toBe('Mellanox        ');
    expect([img[165], img[166], img[167]]).toEqual([0x00, 0x02, 0xc9]);
    expect(img[191]).toBe(sum(img, 128, 190));
    expect(img[223]).toBe(sum(img, 192, 222));
  });

  it('CMIS: length multiplier, copper attenuation bytes, page checksum at 222', () => {
    const img = encodeCmis({ ...base, lengthM: 0.5, attenuationDb: { '5.0GHz': 4, '25.8GHz': 21 } });
    expect([img[0], img[128], img[202], img[204], img[207], img[212]]).toEqual([0x1e, 0x1e, 0x05, 4, 21, 0x0a]);
    expect(Buffer.from(img.subarray(148, 164)).toString('latin1')).toBe('MCP1650-V001E30 ');
    expect(img[222]).toBe(sum(img, 128, 221));
  });

  it.each([
    [0.5, 0x05],
    [1, 0x0a],
    [3, 0x1e],
    [7, 0x47],
    [100, 0x8a],
    [6300, 0xff],
  ])('CMIS length %f m encodes as byte %i and decodes back', (m, byte) => {
    expect(encodeCmisLength(m)).toBe(byte);
    expect(cmisLengthM(byte)).toBe(m);
  });

  it('rejects fields a module could not hold', () => {
    expect(() => encodeSff8636({ ...base, vendorName: 'A vendor name too long' })).toThrow(/vendorName: .* longer than 16 bytes/);
    expect(() => encodeSff8636({ ...base, vendorSn: 'SN\u00e9' })).toThrow(/not printable ASCII/);
    expect(() => encodeSff8636({ ...base, vendorOui: '0002c9' })).toThrow(/not xx:xx:xx/);
    expect(() => encodeSff8636({ ...base, attenuationDb: { '53GHz': 30 } })).toThrow(/no byte for "53GHz"/);
    expect(() => encodeCmis({ ...base, attenuationDb: { '2.5GHz': 3 } })).toThrow(/no byte for "2.5GHz"/);
    expect(() => encodeCmis({ ...base, lengthM: 0.55 })).toThrow(/0.55 m cannot be encoded/);
    expect(() => encodeSff8636({ ...base, lengthM: 300 })).toThrow(/lengthM: 300 is not a byte value/);
  });
});
