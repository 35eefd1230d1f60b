import { describe, expect, it } from 'vitest';
import { encodeCmis, encodeSff8636, formatEthtoolModuleText, formatHexDump, type EepromFields } from '../../src/eeprom/encode.js';
import type { EepromDecode } from '../../src/eeprom/decoded.js';
import { parseEepromHex } from '../../src/probes/eeprom-hex.js';
import { parseEthtoolModule, type ModuleText } from '../../src/probes/ethtool-module.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { sample, sampleSource, samplesIn } from '../helpers/samples.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const M = 'ethtool-module/';
const CMIS_COPPER = `${M}cmis-qsfpdd-mcp1660-w00ae30-passive-copper-prerelease-patch.txt`;
const CMIS_OPTICAL = `${M}cmis-qsfpdd-optical-arista-xdr4-ethtool6x-partial.txt`;
const ICE_OLD = `${M}qsfp28-25g-dac-ice-decoded-old-labels-partial.txt`;
const OEM_BUG = `${M}qsfp28-dac-oem-3m-new-ethtool-labels-attenuation-bug.txt`;
const SPARK = `${M}spark-dac-amphenol-njaakk-n911-400g-class-selected-lines-en.txt`;
const SR4_OPTIC = `${M}qsfp28-sr4-optic-mellanox-mma1b00-cumulus-dom-thresholds.txt`;
const CMIS_OPTICAL_DOM = `${M}cmis-qsfpdd-optical-arista-xdr4-ethtool6x-dom-thresholds.txt`;

// Test-side cleanup of pastes: drop `$ ethtool ...` prompts and the author's `....` elisions.
const outputOnly = (text: string): string =>
  text
    .split('\n')
    .filter((l) => !/^\s*\$/.test(l) && !/^\s*\.+\s*$/.test(l))
    .join('\n');
// The Arista mail wrapped two lines ("Density \n8X", "158.89 \ndegrees F"): rejoin them.
const unwrapped = (text: string): string => text.replace(/ \n(?=[^\n:]*\n)/g, ' ');

const text = (r: ModuleText | EepromDecode): ModuleText => {
  expect('labelStyle' in r).toBe(true);
  return r as ModuleText;
};

const throwsParse = (f: () => unknown, line: number, reason: RegExp): void => {
  const e = parseErrorOf(f);
  expect(e.line).toBe(line);
  expect(e.reason).toMatch(reason);
};

describe('parseEthtoolModule on real decoded outputs', () => {
  it('has every real sample copied with its provenance line', () => {
    expect(samplesIn('ethtool-module').sort()).toEqual([CMIS_COPPER, CMIS_OPTICAL, CMIS_OPTICAL_DOM, ICE_OLD, OEM_BUG, SPARK, SR4_OPTIC].sort());
    for (const f of samplesIn('ethtool-module')) expect(sampleSource(f)).toMatch(/^# source: /);
  });

  it('reads the CMIS QSFP-DD passive DAC (pre-release "0.50km" unit bug read as 0.5 m)', () => {
    const r = text(parseEthtoolModule(outputOnly(sample(CMIS_COPPER))));
    expect(r).toEqual({
      standard: 'CMIS',
      identifier: 0x18,
      identifierText: 'QSFP-DD Double Density 8X Pluggable Transceiver (INF-8628)',
      vendorName: 'Mellanox',
      vendorOui: '00:02:c9',
      vendorPn: 'MCP1660-W00AE30',
      vendorRev: 'A2',
      vendorSn: 'MT2019VS04757',
      dateCode: '200507  _',
      lengthM: 0.5,
      attenuationDb: { '5.0GHz': 4, '7.0GHz': 5, '12.9GHz': 7, '25.8GHz': 21 },
      transmitterTechnology: 'Copper cable, unequalized',
      anomalies: ['length-unit: "0.50km" is the pre-release ethtool unit bug; read as 0.5 m'],
      labelStyle: 'unknown',
      transceiverTypes: [],
      revisionComplianceText: 'Rev. 3.0',
    });
  });

  it('reads the CMIS optical module: no attenuation, 0.00m length is null, "Module State" = old labels', () => {
    const r = text(parseEthtoolModule(unwrapped(sample(CMIS_OPTICAL))));
    expect(r).toMatchObject({
      standard: 'CMIS',
      identifier: 0x18,
      vendorName: 'Arista Networks',
      vendorOui: '00:1c:73',
      vendorPn: 'QDD-400G-XDR4',
      vendorRev: '41',
      vendorSn: 'XKT242211481',
      dateCode: '240531',
      lengthM: null,
      attenuationDb: {},
      transmitterTechnology: '1310 nm EML',
      anomalies: [],
      labelStyle: 'ethtool<=6.11',
      revisionComplianceText: 'Rev. 4.0',
    });
  });

  it('rejects the mail-wrapped Arista paste as it is: line 2 is not "label : value"', () => {
    throwsParse(() => parseEthtoolModule(sample(CMIS_OPTICAL)), 2, /not a "label : value" line: "8X Pluggable/);
  });

  it('reads the ice QSFP28 DAC in old labels: two Transceiver type lines, 4/5/7/10 dB, vendor lines elided', () => {
    const r = text(parseEthtoolModule(outputOnly(sample(ICE_OLD))));
    expect(r).toMatchObject({
      standard: 'SFF-8636',
      identifier: 0x11,
      lengthM: 1,
      attenuationDb: { '2.5GHz': 4, '5.0GHz': 5, '7.0GHz': 7, '12.9GHz': 10 },
      transmitterTechnology: 'Copper cable, unequalized',
      labelStyle: 'ethtool<=6.11',
      transceiverTypes: ['40G Ethernet: 40G Base-CR4', '25G Ethernet: 25G Base-CR CA-N'],
      vendorPn: '',
    });
    expect(r.anomalies).toEqual([
      'incomplete: no "Vendor name", "Vendor OUI", "Vendor PN", "Vendor rev", "Vendor SN", "Date code" line in the output',
      'rate-field: BR Nominal 25500Mbps is byte 140 = 0xff ("see byte 222"); ethtool does not decode the real signalling rate',
      'length-resolution: SFF-8636 byte 146 counts whole metres; 1 m may also be a 0.5 m cable',
    ]);
  });

  it('drops the ethtool >= 6.14 7.0/12.9 GHz lines that repeat 2.5/5.0 GHz (the 5/7/5/7 dB bug sample)', () => {
    const r = text(parseEthtoolModule(sample(OEM_BUG)));
    expect(r).toMatchObject({
      standard: 'SFF-8636',
      identifier: 0x11,
      vendorName: 'OEM',
      vendorOui: '00:00:00',
      vendorPn: 'AB9989-33424C00-',
      vendorRev: 'E',
      vendorSn: 'HQ21010600009',
      dateCode: '210107',
      lengthM: 3,
      attenuationDb: { '2.5GHz': 5, '5.0GHz': 7 },
      labelStyle: 'ethtool>=6.14',
      transceiverTypes: ['100G Ethernet: 100G Base-CR4 or 25G Base-CR CA-L'],
      revisionComplianceText: 'SFF-8636 Rev 2.5/2.6/2.7',
    });
    expect(r.anomalies[0]).toBe(
      'attenuation-ethtool-bug: 7.0/12.9 GHz lines repeat the 2.5/5.0 GHz values (5/7 dB); ethtool >= 6.14 reads bytes 186/187 for them; dropped, read bytes 188/189 with hex on',
    );
  });

  it('reads the Spark Amphenol lines: 40G-CR4 is no failure, OM1 7m is 7 dB at 25.8 GHz, 1m may be 0.5 m', () => {
    const r = text(parseEthtoolModule(sample(SPARK)));
    expect(r).toMatchObject({
      standard: 'SFF-8636',
      identifier: 0x11,
      vendorPn: 'NJAAKK-N911',
      lengthM: 1,
      attenuationDb: { '25.8GHz': 7 },
      transceiverTypes: ['40G Ethernet: 40G Base-CR4'],
      revisionComplianceText: 'Unallocated',
      labelStyle: 'ethtool<=6.11',
    });
    expect(r.anomalies).toContain('om1-is-attenuation: "Length (OM1)" 7m on a copper cable is byte 145 = 7 dB at 25.78 GHz');
    expect(r.anomalies.some((a) => /40G/.test(a))).toBe(false);
  });

  it('switches to the bytes when ethtool printed the hex fallback (ice lower page)', () => {
    const lines = sample(`ethtool-module-hex/qsfp28-dac-ice-unpatched-lower-page-hex-fallback-and-offset-reads.txt`).split('\n');
    const fallback = lines.slice(lines.findIndex((l) => l.trim() === '$ ethtool -m enp65s0f0np0') + 1).join('\n');
    const r = parseEthtoolModule(fallback) as EepromDecode;
    expect(r.standard).toBe('SFF-8636');
    expect(r.identifier).toBe(0x11);
    expect(r.bytesRead).toBe(128);
    expect(r.revisionCompliance).toBe(0x06);
  });

  it('treats netlink-warning output as a failed read, never a decode', () => {
    const lines = sample('ethtool-module-hex/mlx5-eeprom-by-page-failure-garbage-hex.txt').split('\n').slice(1);
    throwsParse(() => parseEthtoolModule(lines.join('\n')), 1, /^failed module EEPROM read: netlink warning/);
  });
});

describe('parseEthtoolModule refuses what it cannot read', () => {
  it.each([
    ['an SFP identifier (generated line)', '\tIdentifier                                : 0x03 (SFP)\n', 1, /0x03 \(SFP\) is not a QSFP/],
    ['no Identifier line', '\tVendor PN                                 : X\n', 1, /no "Identifier" line/],
    ['a text identifier', '\tIdentifier                                : QSFP28\n', 1, /does not start with a 0xNN code/],
    ['two different Vendor PN lines', '\tIdentifier : 0x11 (QSFP28)\n\tVendor PN : A\n\tVendor PN : B\n', 3, /"Vendor PN" printed twice with different values/],
    ['a bad attenuation value', '\tIdentifier : 0x11 (QSFP28)\n\tAttenuation at 2.5GHz : four\n', 2, /is not "<n>db"/],
    ['a bad copper length', '\tIdentifier : 0x11 (QSFP28)\n\tLength (Copper or Active cable) : 1.5m\n', 2, /is not "<n>m"/],
    ['empty text', '', 1, /no "Identifier" line/],
  ])('%s', (_name, input, line, reason) => throwsParse(() => parseEthtoolModule(input), line, reason));

  it('survives fuzzing with nothing but ParseError', () => {
    const hexFallback = sample('ethtool-module-hex/qsfp28-dac-ice-unpatched-lower-page-hex-fallback-and-offset-reads.txt').split('\n').slice(12).join('\n');
    expect(hexFallback.startsWith('Offset')).toBe(true);
    fuzzParser(parseEthtoolModule, [
      outputOnly(sample(CMIS_COPPER)),
      unwrapped(sample(CMIS_OPTICAL)),
      outputOnly(sample(ICE_OLD)),
      sample(OEM_BUG),
      sample(SPARK),
      sample(SR4_OPTIC),
      unwrapped(sample(CMIS_OPTICAL_DOM)),
      hexFallback,
    ]);
  });
});

// Pluggable optics (docs/formats.md §4d): SFF-8636 byte 146 is their OM4 reach, not a cable length, and modules with
// diagnostics print temperature, voltage, per-lane bias and optical power, flags and thresholds.
describe('parseEthtoolModule on optical modules', () => {
  it('reads the QSFP28 SR4 optic: "Length (Copper or Active cable) : 50m" as a 100 m OM4 reach, not a cable length', () => {
    const r = text(parseEthtoolModule(sample(SR4_OPTIC)));
    expect(r).toMatchObject({ standard: 'SFF-8636', vendorPn: 'MMA1B00-C100D', transmitterTechnology: '850 nm VCSEL', lengthM: null, om4LinkLengthM: 100 });
    expect(r.anomalies).toContain(
      'length-is-om4-reach: byte 146 = 50 on a pluggable optic (connector 0x0c (MPO Parallel Optic)) is an OM4 fibre reach of 100 m (2 m units), not a cable length (ethtool prints it as "Length (Copper or Active cable) : 50m")',
    );
  });

  it('reads its diagnostics: 30.56 C, 3.235 V, four lanes, thresholds the module declares, no flag raised', () => {
    const d = text(parseEthtoolModule(sample(SR4_OPTIC))).diagnostics;
    expect(d).toEqual({
      temperatureC: 30.56,
      voltageV: 3.235,
      lanes: [
        { lane: 1, biasMa: 6.75, txPowerMw: 1.3924, rxPowerMw: 0.972 },
        { lane: 2, biasMa: 6.75, txPowerMw: 1.3181, rxPowerMw: 0.9798 },
        { lane: 3, biasMa: 6.75, txPowerMw: 1.3378, rxPowerMw: 1.134 },
        { lane: 4, biasMa: 6.75, txPowerMw: 1.3397, rxPowerMw: 1.134 },
      ],
      rxPowerKind: 'average',
      alarmFlagsImplemented: true,
      thresholds: {
        biasMa: { highAlarm: 8.5, lowAlarm: 5.492, highWarning: 8, lowWarning: 6 },
        txPowerMw: { highAlarm: 3.4673, lowAlarm: 0.0724, highWarning: 1.7378, lowWarning: 0.1445 },
        temperatureC: { highAlarm: 80, lowAlarm: -10, highWarning: 70, lowWarning: 0 },
        voltageV: { highAlarm: 3.5, lowAlarm: 3.1, highWarning: 3.465, lowWarning: 3.135 },
        rxPowerMw: { highAlarm: 3.4673, lowAlarm: 0.0467, highWarning: 1.7378, lowWarning: 0.0933 },
      },
      raised: [],
    });
  });

  it('reads the CMIS optic: 70.49 C beside its 70.00 C warning threshold, the warning flag it raised, 8 channels', () => {
    const r = text(parseEthtoolModule(unwrapped(sample(CMIS_OPTICAL_DOM))));
    expect(r).toMatchObject({ standard: 'CMIS', vendorPn: 'QDD-400G-XDR4', lengthM: null, anomalies: [] });
    expect(r.om4LinkLengthM).toBeUndefined(); // CMIS has no such byte; "Cable assembly length : 0.00m" is no length
    const d = r.diagnostics!;
    expect([d.temperatureC, d.voltageV, d.rxPowerKind, d.alarmFlagsImplemented]).toEqual([70.49, 3.2186, 'average', null]);
    expect(d.thresholds.temperatureC).toEqual({ highAlarm: 75, lowAlarm: -5, highWarning: 70, lowWarning: 0 });
    expect(d.raised).toEqual(['Module temperature high warning']);
    expect(d.lanes.map((l) => [l.lane, l.biasMa, l.txPowerMw, l.rxPowerMw])).toEqual([
      [1, 83.806, 1.5975, 2.2489],
      [2, 81.878, 1.6486, 1.8629],
      [3, 72.9, 1.6333, 1.8427],
      [4, 110.1, 1.4387, 1.8215],
      [5, 0, 0, 0],
      [6, 0, 0, 0],
      [7, 0, 0, 0],
      [8, 0, 0, 0],
    ]);
  });

  it('reads the label spellings of ethtool >= 6.14 ("(Chan 1)" unpadded, "power (Channel 1)") as the padded ones', () => {
    // Edited copy of the recorded SR4 text with the labels respelled as qsfp.c of ethtool 7.0 prints them.
    const respelled = sample(SR4_OPTIC)
      .replace(/(alarm|warning) +\((Chan|Channel) /g, '$1 ($2 ')
      .replace(/power\(Channel/g, 'power (Channel');
    expect(respelled).not.toBe(sample(SR4_OPTIC));
    expect(text(parseEthtoolModule(respelled)).diagnostics).toEqual(text(parseEthtoolModule(sample(SR4_OPTIC))).diagnostics);
  });

  it('names the flags that are On, a receiver given as OMA, and refuses a reading not in its unit', () => {
    // Edited copies of the recorded SR4 text: one lane flag turned On, the receiver lines relabelled OMA, a bad value.
    const flagged = sample(SR4_OPTIC).replace('Laser rx power low alarm    (Channel 3)   : Off', 'Laser rx power low alarm    (Channel 3)   : On');
    expect(text(parseEthtoolModule(flagged)).diagnostics!.raised).toEqual(['Laser rx power low alarm (Channel 3)']);
    const oma = sample(SR4_OPTIC).replaceAll('Rcvr signal avg optical power(', 'Receiver signal OMA(');
    expect(text(parseEthtoolModule(oma)).diagnostics!.rxPowerKind).toBe('OMA');
    const lines = sample(SR4_OPTIC).split('\n');
    const at = lines.findIndex((l) => l.includes('Module voltage   '));
    throwsParse(() => parseEthtoolModule(sample(SR4_OPTIC).replace('3.2350 V', '3.2350 mV')), at + 1, /^Module voltage "3\.2350 mV" is not "<n> V"$/);
    throwsParse(
      () => parseEthtoolModule(flagged.replace('(Channel 3)   : On', '(Channel 3)   : Maybe')),
      lines.findIndex((l) => l.includes('low alarm    (Channel 3)') && l.includes('rx')) + 1,
      /is not On or Off/,
    );
  });

  it('reports no diagnostics for the passive DACs that print 0.00 degrees C and 0.0000 V, and keeps their length', () => {
    const r = text(parseEthtoolModule(outputOnly(sample(CMIS_COPPER))));
    expect(r.diagnostics).toBeUndefined();
    expect(r.lengthM).toBe(0.5);
    expect(text(parseEthtoolModule(sample(SPARK))).om4LinkLengthM).toBeUndefined();
  });

  it('decodes byte 146 of an optic the same from the bytes: OM4 reach 100 m, no cable length (generated image)', () => {
    // Generated, not recorded: the encoder's image with an 850 nm VCSEL (code 0) behind an MPO connector (0x0c).
    const img = encodeSff8636({
      vendorName: 'OPTIC',
      vendorOui: '00:02:c9',
      vendorPn: 'SR4-GENERATED',
      vendorRev: 'A',
      vendorSn: 'GEN0001',
      dateCode: '240101',
      lengthM: 50,
      attenuationDb: {},
      transmitterTechnology: 0x0,
    });
    img[130] = 0x0c;
    img[191] = img.slice(128, 191).reduce((a, b) => (a + b) & 0xff, 0);
    const r = parseEepromHex(formatHexDump(img.slice(0, 256), 0));
    expect(r).toMatchObject({ lengthM: null, om4LinkLengthM: 100, connector: 0x0c, transmitterTechnology: '850 nm VCSEL' });
    expect(r.anomalies).toEqual([
      'length-is-om4-reach: byte 146 = 50 on a pluggable optic (connector 0x0c) is an OM4 fibre reach of 100 m (2 m units), not a cable length (ethtool prints it as "Length (Copper or Active cable) : 50m")',
    ]);
    img[130] = 0x23; // an active optical cable has no separable connector: byte 146 stays its length
    img[191] = img.slice(128, 191).reduce((a, b) => (a + b) & 0xff, 0);
    expect(parseEepromHex(formatHexDump(img.slice(0, 256), 0))).toMatchObject({ lengthM: 50 });
  });
});

describe('encode -> ethtool text -> parseEthtoolModule (generated text, not recorded)', () => {
  const dac: EepromFields = {
    vendorName: 'Mellanox',
    vendorOui: '00:02:c9',
    vendorPn: 'MCP1650-V001E30',
    vendorRev: 'A3',
    vendorSn: 'MT2301VS01234',
    dateCode: '230115',
    lengthM: 2,
    attenuationDb: { '2.5GHz': 3, '5.0GHz': 4, '7.0GHz': 6, '12.9GHz': 8, '25.8GHz': 12 },
    compliance: 0x08,
    extendedCompliance: 0x40,
  };
  const identity = (r: ModuleText | EepromDecode) => ({
    vendorName: r.vendorName,
    vendorOui: r.vendorOui,
    vendorPn: r.vendorPn,
    vendorRev: r.vendorRev,
    vendorSn: r.vendorSn,
    dateCode: r.dateCode,
    lengthM: r.lengthM,
    transmitterTechnology: r.transmitterTechnology,
  });

  it('SFF-8636 as ethtool 6.7 prints it: every field back, same as the hex decode', () => {
    const img = encodeSff8636(dac);
    const r = text(parseEthtoolModule(formatEthtoolModuleText(img, { style: '6.7' })));
    expect(r.labelStyle).toBe('ethtool<=6.11');
    expect(r.attenuationDb).toEqual(dac.attenuationDb);
    expect(r.transceiverTypes).toEqual(['40G Ethernet: 40G Base-CR4', '50GBASE-CR, 100GBASE-CR2, or 200GBASE-CR4']);
    expect(identity(r)).toEqual({
      vendorName: 'Mellanox',
      vendorOui: '00:02:c9',
      vendorPn: 'MCP1650-V001E30',
      vendorRev: 'A3',
      vendorSn: 'MT2301VS01234',
      dateCode: '230115',
      lengthM: 2,
      transmitterTechnology: 'Copper cable, unequalized',
    });
    const hex = parseEepromHex(formatHexDump(img));
    expect(identity(hex)).toEqual(identity(r));
    expect(hex.attenuationDb).toEqual(r.attenuationDb);
  });

  it('SFF-8636 as ethtool 7.0 prints it: the 7.0/12.9 GHz bug is imitated and caught', () => {
    const r = text(parseEthtoolModule(formatEthtoolModuleText(encodeSff8636(dac), { style: '7.0' })));
    expect(r.labelStyle).toBe('ethtool>=6.14');
    expect(r.attenuationDb).toEqual({ '2.5GHz': 3, '5.0GHz': 4, '25.8GHz': 12 });
    expect(r.anomalies[0]).toMatch(/^attenuation-ethtool-bug: .* \(3\/4 dB\)/);
    expect(r.vendorSn).toBe('MT2301VS01234');
    expect(r.transceiverTypes).toEqual(['50GBASE-CR, 100GBASE-CR2, or 200GBASE-CR4']);
  });

  it('drops 0 dB at 7.0/12.9 GHz (copper placeholders) and names a 0.5 m part number read as 1m', () => {
    const img = encodeSff8636({ ...dac, vendorPn: 'QSFP-200G-CU0.5M', lengthM: 0.5, attenuationDb: { '2.5GHz': 2, '5.0GHz': 3, '7.0GHz': 0, '12.9GHz': 0 } });
    const out = formatEthtoolModuleText(img, { style: '6.7' });
    expect(out).toContain('\tLength (Copper or Active cable)           : 1m\n');
    const r = text(parseEthtoolModule(out));
    expect(r.attenuationDb).toEqual({ '2.5GHz': 2, '5.0GHz': 3 });
    expect(r.lengthM).toBe(1);
    expect(r.anomalies).toEqual([
      'rate-field: BR Nominal 25500Mbps is byte 140 = 0xff ("see byte 222"); ethtool does not decode the real signalling rate',
      'attenuation-placeholder: 0 dB at 7.0GHz, 12.9GHz on a copper cable (decoded text): placeholder, not a measured value',
      'length-resolution: Vendor PN "QSFP-200G-CU0.5M" names a 0.5 m cable but SFF-8636 byte 146 cannot express < 1 m (reads 1 m)',
    ]);
  });

  it.each(['6.7', '7.0'] as const)('CMIS 0.5 m DAC in ethtool %s text', (style) => {
    const fields = { ...dac, lengthM: 0.5, attenuationDb: { '5.0GHz': 4, '7.0GHz': 5, '12.9GHz': 7, '25.8GHz': 21 } };
    const img = encodeCmis(fields);
    const out = formatEthtoolModuleText(img, { style });
    expect(out).toContain(
      style === '6.7' ? '\tCable assembly length                     : 0.50m\n' : '\tCable assembly length                     : 0.5000m\n',
    );
    const r = text(parseEthtoolModule(out));
    expect(r).toMatchObject({ standard: 'CMIS', identifier: 0x1e, lengthM: 0.5, attenuationDb: fields.attenuationDb, anomalies: [] });
    expect(r.labelStyle).toBe(style === '6.7' ? 'ethtool<=6.11' : 'ethtool>=6.14');
    expect(identity(r)).toEqual(identity(parseEepromHex(formatHexDump(img))));
  });
});
