// The cable family comes from the EEPROM (identifier, SFF-8636 byte 192 and nominal rate, CMIS application
// descriptors), never from how the link trained; a 400G-class cable that trained 4 x 50G is certified as QSFP112 with
// its trained mode beside it.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { classifyCable } from '../../src/eeprom/classify.js';
import { encodeCmis, encodeSff8636, formatEthtoolModuleText, formatHexDump, type EepromFields } from '../../src/eeprom/encode.js';
import { parseEepromHex } from '../../src/probes/eeprom-hex.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { runCli } from '../helpers/cli.js';
import { sample } from '../helpers/samples.js';
import { csvObjects } from '../helpers/csv.js';

// Vendor fields of a generated cable (not a recording).
const VENDOR: EepromFields = {
  vendorName: 'Amphenol',
  vendorOui: '78:a7:14',
  vendorPn: 'NJAAKK-N911',
  vendorRev: 'A',
  vendorSn: 'GENERATED01',
  dateCode: '250101',
  lengthM: 0.4,
  attenuationDb: {},
};
const decode = (img: Uint8Array) => parseEepromHex(formatHexDump(img));

describe('classifyCable from the EEPROM bytes', () => {
  it('the Spark DAC whose bytes the hot-plug notes publish (131 = 0x88, 192 = 0x3f, 140 = 0xff, 222 = 0xd5) is 400G class: QSFP112', () => {
    const img = encodeSff8636({ ...VENDOR, compliance: 0x08, extendedCompliance: 0x3f, nominalRateGBd: 53.25, encoding: 0x08 });
    expect([img[131], img[192], img[140], img[222]]).toEqual([0x88, 0x3f, 0xff, 0xd5]);
    // The same bytes print what the real paste shows (samples/ethtool-module/spark-dac-amphenol-...: selected lines).
    const text = formatEthtoolModuleText(img, { style: '6.7' });
    const real = sample('ethtool-module/spark-dac-amphenol-njaakk-n911-400g-class-selected-lines-en.txt')
      .split('\n')
      .filter((l) => /^(Identifier|Transceiver type|Encoding|BR, Nominal)\s/.test(l))
      .map((l) => l.replace(/\s+:\s+/, ' : '));
    expect(real).toEqual(['Identifier : 0x11 (QSFP28)', 'Transceiver type : 40G Ethernet: 40G Base-CR4', 'Encoding : 0x08 (PAM4)', 'BR, Nominal : 25500Mbps']);
    const printed = text.split('\n').map((l) => l.trim().replace(/\s+:\s+/, ' : '));
    for (const line of real) expect(printed).toContain(line);
    const c = classifyCable(decode(img));
    expect(c).toEqual({
      family: 'QSFP112',
      laneGbps: 100,
      basis: '400G class, 100G PAM4 lanes: SFF-8636 byte 192 = 0x3f (100GBASE-CR1, 200GBASE-CR2 or 400GBASE-CR4)',
    });
  });

  it('SFF-8636 byte 192 = 0x40 is QSFP56; without byte 192 the nominal rate and encoding decide; a disagreement is named', () => {
    expect(classifyCable(decode(encodeSff8636({ ...VENDOR, compliance: 0x08, extendedCompliance: 0x40, nominalRateGBd: 26.5625 }))).family).toBe('QSFP56');
    expect(classifyCable(decode(encodeSff8636({ ...VENDOR, nominalRateGBd: 26.5625, encoding: 0x08 })))).toMatchObject({
      family: 'QSFP56',
      basis: expect.stringContaining('nominal rate 26.5 GBd, PAM4'),
    });
    expect(classifyCable(decode(encodeSff8636({ ...VENDOR, nominalRateGBd: 25.75, encoding: 0x05 }))).family).toBe('QSFP28');
    expect(classifyCable(decode(encodeSff8636({ ...VENDOR, extendedCompliance: 0x40, nominalRateGBd: 53.25 }))).basis).toMatch(
      /byte 192 = 0x40 .*; the nominal rate 53.25 GBd says 100G lanes$/,
    );
    expect(classifyCable(decode(encodeSff8636({ ...VENDOR, nominalRateGBd: 10.3, encoding: 0x05 })))).toMatchObject({
      family: 'unknown',
      basis: 'SFF-8636: no extended compliance code (byte 192) and nominal rate 10.3 GBd',
    });
  });

  it('CMIS: the highest-rate application the module advertises decides; none advertised or another form factor is unknown', () => {
    const qsfp112 = encodeCmis({
      ...VENDOR,
      applications: [
        { hostInterface: 0x47, mediaInterface: 0x01, hostLanes: 2, mediaLanes: 2 },
        { hostInterface: 0x48, mediaInterface: 0x01, hostLanes: 4, mediaLanes: 4 },
      ],
    });
    const d = decode(qsfp112);
    expect(d.applications).toEqual([
      { hostInterface: 0x47, mediaInterface: 0x01, hostLanes: 2, mediaLanes: 2 },
      { hostInterface: 0x48, mediaInterface: 0x01, hostLanes: 4, mediaLanes: 4 },
    ]);
    expect(classifyCable(d)).toEqual({
      family: 'QSFP112',
      laneGbps: 100,
      basis: '400G class, 100G PAM4 lanes: CMIS application host interface 0x47 (2 lanes)',
    });
    expect(
      classifyCable(decode(encodeCmis({ ...VENDOR, applications: [{ hostInterface: 0x1c, mediaInterface: 0x01, hostLanes: 4, mediaLanes: 4 }] }))).family,
    ).toBe('QSFP56');
    expect(classifyCable(decode(encodeCmis(VENDOR)))).toEqual({
      family: 'unknown',
      laneGbps: null,
      basis: 'CMIS: no application with a known host interface (none advertised)',
    });
    const dd = encodeCmis({ ...VENDOR, identifier: 0x18, applications: [{ hostInterface: 0x48, mediaInterface: 0x01, hostLanes: 4, mediaLanes: 4 }] });
    expect(classifyCable(decode(dd))).toMatchObject({ family: 'unknown', basis: expect.stringMatching(/^identifier 0x18 is not a QSFP module/) });
  });

  it('a real lower page alone (the QSFP28 DAC the ice driver read) does not tell the class: unknown, saying why', () => {
    const text = sample('ethtool-module-hex/qsfp28-dac-ice-unpatched-lower-page-hex-fallback-and-offset-reads.txt');
    const lower = text.slice(text.lastIndexOf('Offset'));
    expect(classifyCable(parseEepromHex(lower))).toEqual({
      family: 'unknown',
      laneGbps: null,
      basis: 'SFF-8636: no extended compliance code (byte 192) and no nominal rate read',
    });
  });

  it('identities in journals of the previous version keep classifying (SFF-8636 byte 192 was already decoded)', () => {
    const line = gunzipSync(readFileSync(join(import.meta.dirname, '..', 'fixtures', 'journals-v1', 'good-qsfp56-quick', 'journal.jsonl.gz')))
      .toString('utf8')
      .split('\n')
      .find((l) => l.includes('"type":"identity"'))!;
    const id = (JSON.parse(line) as { ends: { identity: Parameters<typeof classifyCable>[0] }[] }).ends[0]!.identity;
    expect(classifyCable(id).family).toBe('QSFP56');
  });

  it('on the simulated lab, a 400G-class cable (SFF-8636, 0x3f) that trains 4 x 50G is certified QSFP112 with "trained 4 x 50G"', async () => {
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as {
      name: string;
      cable: Record<string, unknown> & { eeprom: Record<string, unknown> };
    };
    s.name = 'class-400g-trains-4x50';
    s.cable['eepromClass'] = 'QSFP112';
    s.cable.eeprom['memoryMap'] = 'sff8636';
    const dir = mkdtempSync(join(tmpdir(), 'cq-class-'));
    writeFileSync(join(dir, 's.json'), JSON.stringify(s));
    const r = await runCli(['run', '--sim', join(dir, 's.json'), '--protocol', 'quick', '--out', join(dir, 'out'), '--json']);
    const res = JSON.parse(r.out) as { outcome: string; runDir: string; reasons: unknown[] };
    expect(res.outcome, JSON.stringify(res.reasons)).toBe('PASS');
    const rec = JSON.parse(readFileSync(join(res.runDir, 'record.json'), 'utf8')) as {
      cable: { family: string; familyBasis: string; lanes: number; trainedSpeedMbps: number };
    };
    expect(rec.cable).toMatchObject({ family: 'QSFP112', lanes: 4, trainedSpeedMbps: 200000 });
    expect(rec.cable.familyBasis).toMatch(/byte 192 = 0x3f/);
    const cert = JSON.parse(readFileSync(join(res.runDir, 'setup-check.json'), 'utf8')) as { body: { cable: { family: string; trainedMode: string } } };
    expect(cert.body.cable).toMatchObject({ family: 'QSFP112', trainedMode: '4 x 50G' });
    expect(readFileSync(join(res.runDir, 'setup-check.html'), 'utf8')).toContain('Family <b>QSFP112</b> as the EEPROM says');
    const [row] = csvObjects(readFileSync(join(res.runDir, 'summary.csv'), 'utf8'));
    expect([row!.family, row!.lanes, row!.trained_mode]).toEqual(['QSFP112', '4', '4 x 50G']);
  });
});

describe('classifyCable on an identity read back from an edited journal', () => {
  it('an extended compliance or CMIS application without its byte is "not read", never a crash', () => {
    const sff = classifyCable({ standard: 'SFF-8636', identifier: 0x11, extendedCompliance: {} as never, nominalRateGBd: null } as never);
    expect(sff.family).toBe('unknown');
    expect(sff.basis).toBe('SFF-8636: no extended compliance code (byte 192) and no nominal rate read');
    const cmis = classifyCable({ standard: 'CMIS', identifier: 0x18, applications: [{}] } as never);
    expect(cmis.family).toBe('unknown');
    expect(cmis.basis).toBe('CMIS: no application with a known host interface (none advertised)');
  });
});
