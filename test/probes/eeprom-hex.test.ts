import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ParseError } from '../../src/domain/errors.js';
import { decodeEeprom } from '../../src/eeprom/decode.js';
import { encodeCmis, encodeSff8636, formatHexDump, type EepromFields } from '../../src/eeprom/encode.js';
import { readHexDump } from '../../src/eeprom/hex-rows.js';
import { parseEepromHex, readModuleEeprom } from '../../src/probes/eeprom-hex.js';
import { RemoteCommandError, type CommandResult } from '../../src/transport/types.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { sample, sampleSource } from '../helpers/samples.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const HEX = 'ethtool-module-hex/';
const ICE_UNPATCHED = `${HEX}qsfp28-dac-ice-unpatched-lower-page-hex-fallback-and-offset-reads.txt`;
const ICE_PATCHED = `${HEX}qsfp28-dac-ice-patched-offset-0x90-reads.txt`;
const SFP = `${HEX}sfp-mikrotik-aoc-amd-xgbe-512B-hex.txt`;
const MLX5_GARBAGE = `${HEX}mlx5-eeprom-by-page-failure-garbage-hex.txt`;
// The SFP paste starts with the bare command line `ethtool -m enp6s0f2 hex on` (no prompt): drop it.
const sfpDump = (): string => sample(SFP).split('\n').slice(1).join('\n');

// The pastes carry `$ ethtool ...` prompts and the author's "patched driver:" headings: keep only ethtool output.
const outputOnly = (text: string): string =>
  text
    .split('\n')
    .filter((l) => !/^\s*[$#]/.test(l) && !/driver:\s*$/.test(l))
    .join('\n');

// The unpatched paste holds two offset reads, then the plain `ethtool -m` (hex fallback) output.
function unpatchedParts(): { offsetReads: string; lowerPage: string } {
  const lines = sample(ICE_UNPATCHED).split('\n');
  const plain = lines.findIndex((l) => l.trim() === '$ ethtool -m enp65s0f0np0');
  return { offsetReads: outputOnly(lines.slice(0, plain).join('\n')), lowerPage: lines.slice(plain + 1).join('\n') };
}

const throwsParse = (f: () => unknown, reason: RegExp): void => {
  expect(parseErrorOf(f).reason).toMatch(reason);
};

const SPARK_LIKE: EepromFields = {
  vendorName: 'Amphenol',
  vendorOui: '78:a7:14',
  vendorPn: 'NJAAKK-N911',
  vendorRev: 'A',
  vendorSn: 'APF23450012ABC',
  dateCode: '230815',
  lengthM: 1,
  attenuationDb: { '2.5GHz': 3, '5.0GHz': 4, '7.0GHz': 5, '12.9GHz': 7, '25.8GHz': 7 },
  compliance: 0x08,
  extendedCompliance: 0x3f,
  nominalRateGBd: 53.25,
};

// What the harness reads: lower page and upper page 00h, two netlink page reads passed concatenated.
const harnessDump = (img: Uint8Array): string => formatHexDump(img.subarray(0, 128), 0) + formatHexDump(img.subarray(128, 256), 128);

describe('parseEepromHex on real dumps', () => {
  it('keeps the provenance line of every copied sample', () => {
    for (const f of [ICE_UNPATCHED, ICE_PATCHED, SFP, MLX5_GARBAGE]) expect(sampleSource(f)).toMatch(/^# source: /);
  });

  it('decodes the ice lower-page fallback dump (0x11 QSFP28, rev 0x06) and says the upper page is missing', () => {
    const r = parseEepromHex(unpatchedParts().lowerPage);
    expect(r.standard).toBe('SFF-8636');
    expect(r.identifier).toBe(0x11);
    expect(r.revisionCompliance).toBe(0x06);
    expect(r.bytesRead).toBe(128);
    expect(r.vendorName).toBe('');
    expect(r.lengthM).toBeNull();
    expect(r.checksums).toEqual({});
    expect(r.anomalies).toEqual(['missing-bytes: upper page 00h read 0 of 128 bytes; fields whose bytes are missing are left empty']);
    const dump = readHexDump(unpatchedParts().lowerPage);
    expect([dump.bytes[2], dump.bytes[0x6d], dump.bytes[0x6e], dump.bytes[0x71]]).toEqual([0x06, 0x01, 0x08, 0x10]);
  });

  it('refuses the unpatched ice offset reads: byte 0x92 came back as 00 then 01', () => {
    throwsParse(() => parseEepromHex(unpatchedParts().offsetReads), /byte 0x92 read twice with different values \(0x00 then 0x01\)/);
  });

  it('decodes the patched 0x90 reads as SFF-8636 bytes 144-155: 1 m, copper unequalized, "Mellanox"', () => {
    const text = outputOnly(sample(ICE_PATCHED));
    const dump = readHexDump(text);
    expect(dump.dumps).toBe(2);
    expect(dump.bytesRead).toBe(12);
    expect(dump.bytes.slice(0x90, 0x9c)).toEqual([0x00, 0x00, 0x01, 0xa0, 0x4d, 0x65, 0x6c, 0x6c, 0x61, 0x6e, 0x6f, 0x78]);
    throwsParse(() => parseEepromHex(text), /identifier byte \(offset 0 or 128\) not read/);
    const r = parseEepromHex(text, { standard: 'SFF-8636' });
    expect(r.lengthM).toBe(1);
    expect(r.transmitterCode).toBe(0xa);
    expect(r.transmitterTechnology).toBe('Copper cable, unequalized');
    expect(r.vendorName).toBe('Mellanox');
    expect(r.attenuationDb).toEqual({}); // byte 145 = 0 (not given); 186-189 not read
    expect(r.anomalies).toContain('missing-bytes: Vendor name only bytes 148-155 of 148-163 read; value may be cut short');
    expect(r.anomalies).toContain('length-resolution: SFF-8636 byte 146 counts whole metres; 1 m may also be a 0.5 m cable');
  });

  it('reads all 512 bytes of the SFP dump but refuses to decode identifier 0x03 as QSFP', () => {
    const text = sfpDump();
    const dump = readHexDump(text);
    expect(dump.bytesRead).toBe(512);
    expect(dump.bytes[0]).toBe(0x03);
    expect(String.fromCharCode(...(dump.bytes.slice(20, 28) as number[]))).toBe('MikroTik');
    expect(String.fromCharCode(...(dump.bytes.slice(40, 48) as number[]))).toBe('S+AO0005');
    expect(dump.bytes[0x1f0]).toBe(0x00);
    throwsParse(() => parseEepromHex(text), /identifier 0x03 \(SFP\) is an SFP module \(SFF-8472/);
  });

  it('treats the mlx5 netlink-warning dump as a failed read, and its garbage alone as no module', () => {
    const lines = sample(MLX5_GARBAGE).split('\n').slice(1); // drop the `# ethtool -m eth2` prompt
    const e = parseErrorOf(() => parseEepromHex(lines.join('\n')));
    expect(e.line).toBe(1);
    expect(e.reason).toMatch(/^failed module EEPROM read: netlink warning: mlx5_core: Query module eeprom by page failed/);
    throwsParse(() => parseEepromHex(lines.slice(2).join('\n')), /identifier 0x00 is not a QSFP/);
  });
});

describe('parseEepromHex on encoded images (generated, not recorded)', () => {
  it('round-trips an SFF-8636 Spark-like DAC through the two page reads', () => {
    const r = parseEepromHex(harnessDump(encodeSff8636(SPARK_LIKE)));
    expect(r).toMatchObject({
      standard: 'SFF-8636',
      identifier: 0x11,
      vendorName: 'Amphenol',
      vendorOui: '78:a7:14',
      vendorPn: 'NJAAKK-N911',
      vendorRev: 'A',
      vendorSn: 'APF23450012ABC',
      dateCode: '230815',
      lengthM: 1,
      attenuationDb: SPARK_LIKE.attenuationDb,
      transmitterTechnology: 'Copper cable, unequalized',
      extendedCompliance: { code: 0x3f, text: '100GBASE-CR1, 200GBASE-CR2 or 400GBASE-CR4' },
      nominalRateGBd: 53.25,
      bytesRead: 256,
    });
    expect(r.checksums.ccBase!.ok).toBe(true);
    expect(r.checksums.ccExt!.ok).toBe(true);
    expect(r.anomalies).toEqual(['length-resolution: SFF-8636 byte 146 counts whole metres; 1 m may also be a 0.5 m cable']);
  });

  it('flags a bad CC_BASE with both values', () => {
    const img = encodeSff8636({ ...SPARK_LIKE, badChecksum: 'ccBase' });
    const r = parseEepromHex(harnessDump(img));
    const c = r.checksums.ccBase!;
    expect(c.ok).toBe(false);
    expect(c.stored).toBe((c.computed + 1) & 0xff);
    expect(r.checksums.ccExt!.ok).toBe(true);
    expect(r.anomalies).toContain(
      `checksum: CC_BASE over bytes 128-190 is 0x${c.computed.toString(16).padStart(2, '0')} but byte 191 stores 0x${c.stored.toString(16).padStart(2, '0')}`,
    );
  });

  it('drops 0 dB at 7.0/12.9 GHz on copper as placeholders', () => {
    const r = parseEepromHex(harnessDump(encodeSff8636({ ...SPARK_LIKE, attenuationDb: { '2.5GHz': 4, '5.0GHz': 5, '7.0GHz': 0, '12.9GHz': 0 } })));
    expect(r.attenuationDb).toEqual({ '2.5GHz': 4, '5.0GHz': 5 });
    expect(r.anomalies).toContain('attenuation-placeholder: 0 dB at 7.0GHz, 12.9GHz on a copper cable (bytes 186-189): placeholder, not a measured value');
  });

  it('names a 0.5 m part number that byte 146 can only call 1 m', () => {
    const r = parseEepromHex(harnessDump(encodeSff8636({ ...SPARK_LIKE, vendorPn: 'QSFP-200G-CU0.5M', lengthM: 0.5 })));
    expect(r.lengthM).toBe(1);
    expect(r.anomalies).toContain('length-resolution: Vendor PN "QSFP-200G-CU0.5M" names a 0.5 m cable but SFF-8636 byte 146 cannot express < 1 m (reads 1 m)');
  });

  it('shows non-printable vendor bytes as _ and says where they are', () => {
    const img = encodeSff8636(SPARK_LIKE);
    img[156] = 0x01; // inside Vendor name (148-163), after "Amphenol"
    img[191] = (img[191]! + 0x01 - 0x20) & 0xff; // keep CC_BASE valid: 0x20 (space) became 0x01
    const r = parseEepromHex(harnessDump(img));
    expect(r.vendorName).toBe('Amphenol_');
    expect(r.checksums.ccBase!.ok).toBe(true);
    expect(r.anomalies).toContain('vendor-field-nonprintable: Vendor name has non-printable byte(s) at offset 156 (shown as _)');
  });

  it('round-trips a CMIS QSFP112 0.5 m DAC with its page 00h checksum, and flags a bad one', () => {
    const fields: EepromFields = { ...SPARK_LIKE, lengthM: 0.5, attenuationDb: { '5.0GHz': 4, '7.0GHz': 5, '12.9GHz': 7, '25.8GHz': 21 } };
    const r = parseEepromHex(harnessDump(encodeCmis(fields)));
    expect(r).toMatchObject({
      standard: 'CMIS',
      identifier: 0x1e,
      vendorName: 'Amphenol',
      vendorPn: 'NJAAKK-N911',
      vendorSn: 'APF23450012ABC',
      lengthM: 0.5,
      attenuationDb: fields.attenuationDb,
      transmitterCode: 0x0a,
      revisionCompliance: 0x50,
    });
    expect(r.checksums.page00!.ok).toBe(true);
    expect(r.anomalies).toEqual([]);
    const bad = parseEepromHex(harnessDump(encodeCmis({ ...fields, badChecksum: 'page00' })));
    expect(bad.checksums.page00!.ok).toBe(false);
    expect(bad.anomalies[0]).toMatch(/^checksum: page 00h checksum over bytes 128-221 is 0x[0-9a-f]{2} but byte 222 stores/);
  });

  it('decodes an upper-page-only read, taking the identifier from byte 128', () => {
    const r = parseEepromHex(formatHexDump(encodeSff8636(SPARK_LIKE).subarray(128), 128));
    expect(r.identifier).toBe(0x11);
    expect(r.vendorPn).toBe('NJAAKK-N911');
    expect(r.anomalies[0]).toBe('missing-bytes: lower page (0-127) not read; identifier taken from byte 128');
  });
});

describe('parseEepromHex is strict', () => {
  const img = encodeSff8636(SPARK_LIKE);
  it.each([
    ['a row before the header', '0x0000:\t\t11 00\n', 1, /before the `Offset Values` header/],
    ['a skipped row', formatHexDump(img.subarray(0, 48)).replace('0x0010:', '0x0020:'), 4, /out of sequence \(0x0010 expected\)/],
    ['a bad byte', formatHexDump(img.subarray(0, 16)).replace('11 ', '1g '), 3, /"1g" is not a hex byte/],
    ['a stray sentence', `${formatHexDump(img.subarray(0, 16))}this is not ethtool\n`, 4, /unexpected line in hex dump/],
    ['17 bytes in a row', 'Offset\t\tValues\n------\t\t------\n0x0000:\t\t' + '00 '.repeat(17) + '\n', 3, /has 17 bytes/],
    ['empty text', '', 1, /no hex rows/],
  ])('rejects %s', (_name, text, line, reason) => {
    const e = parseErrorOf(() => parseEepromHex(text));
    expect(e.line).toBe(line);
    expect(e.reason).toMatch(reason);
  });

  it('survives fuzzing with nothing but ParseError', () => {
    fuzzParser((t) => parseEepromHex(t), [unpatchedParts().lowerPage, outputOnly(sample(ICE_PATCHED)), sfpDump(), harnessDump(img)]);
  });

  it('decodes any random 256-byte image or raises ParseError, never anything else', () => {
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 256, maxLength: 256 }), (bytes) => {
        try {
          const r = parseEepromHex(harnessDump(bytes));
          expect(r.identifier).toBe(bytes[0]);
          expect(r.bytesRead).toBe(256);
          expect(Object.values(r.checksums).length).toBeGreaterThan(0);
        } catch (e) {
          if (!(e instanceof ParseError)) throw e;
          expect(e.reason).toMatch(/^identifier 0x[0-9a-f]{2}/);
        }
      }),
      { numRuns: 300 },
    );
    // Biased to the decodable identifiers so both decoders see random bytes.
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 256, maxLength: 256 }), fc.constantFrom(0x0c, 0x0d, 0x11, 0x18, 0x19, 0x1e), (bytes, id) => {
        bytes[0] = id;
        const r = decodeEeprom(Array.from(bytes), 256);
        expect(r.standard).toBe(id >= 0x18 ? 'CMIS' : 'SFF-8636');
        expect(typeof r.vendorName).toBe('string');
      }),
      { numRuns: 300 },
    );
  });
});

describe('readModuleEeprom (simulated runner, generated bytes)', () => {
  const img = encodeSff8636(SPARK_LIKE);
  const LOWER = 'sudo -n ethtool -m enp1s0f0np0 page 0 offset 0 length 128 hex on';
  const UPPER = 'sudo -n ethtool -m enp1s0f0np0 page 0 offset 128 length 128 hex on';

  // Answers keyed by the exact command line (the lower and the upper page reads).
  const byCommand = (answers: Record<string, Partial<CommandResult>>, seen: string[] = []) => cannedRunner((c) => answers[c], seen);

  it('reads the lower page then upper page 00h and decodes both', async () => {
    const seen: string[] = [];
    const r = await readModuleEeprom(
      byCommand({ [LOWER]: { stdout: formatHexDump(img.subarray(0, 128), 0) }, [UPPER]: { stdout: formatHexDump(img.subarray(128), 128) } }, seen),
      'enp1s0f0np0',
    );
    expect(seen).toEqual([LOWER, UPPER]);
    expect(r.vendorPn).toBe('NJAAKK-N911');
    expect(r.checksums.ccExt!.ok).toBe(true);
  });

  it('decodes the lower page alone when the upper read fails, and says why', async () => {
    const r = await readModuleEeprom(
      byCommand({
        [LOWER]: { stdout: formatHexDump(img.subarray(0, 128), 0) },
        [UPPER]: { exitCode: 1, stderr: 'Cannot get Module EEPROM data: Input/output error' },
      }),
      'enp1s0f0np0',
    );
    expect(r.identifier).toBe(0x11);
    expect(r.vendorPn).toBe('');
    expect(r.anomalies.at(-1)).toMatch(
      /^missing-bytes: upper page 00h read failed: spark-a: `sudo -n ethtool .*` exited with 1: Cannot get Module EEPROM data/,
    );
  });

  it('ignores upper-page garbage printed after a netlink warning on stderr', async () => {
    const r = await readModuleEeprom(
      byCommand({
        [LOWER]: { stdout: formatHexDump(img.subarray(0, 128), 0) },
        [UPPER]: {
          stdout: formatHexDump(new Uint8Array(128).fill(0x41), 128),
          stderr: 'netlink warning: mlx5_core: Query module eeprom by page failed, read 0 bytes, err -5\n',
        },
      }),
      'enp1s0f0np0',
    );
    expect(r.vendorName).toBe('');
    expect(r.anomalies.at(-1)).toBe(
      'missing-bytes: upper page 00h read failed: netlink warning: mlx5_core: Query module eeprom by page failed, read 0 bytes, err -5',
    );
  });

  it('fails with the command evidence when the lower page cannot be read', async () => {
    await expect(readModuleEeprom(byCommand({ [LOWER]: { exitCode: 1, stderr: 'sudo: a password is required' } }), 'enp1s0f0np0')).rejects.toThrow(
      RemoteCommandError,
    );
    await expect(
      readModuleEeprom(
        byCommand({ [LOWER]: { stdout: formatHexDump(img.subarray(0, 128)), stderr: 'netlink warning: Query module eeprom failed' } }),
        'enp1s0f0np0',
      ),
    ).rejects.toThrow(/failed module EEPROM read/);
  });
});
