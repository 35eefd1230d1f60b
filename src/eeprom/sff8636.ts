import { NO_SEPARABLE_CONNECTOR, checksumNote, dropPlaceholderAttenuation, lengthResolutionNote, om4ReachOfByte146 } from './anomalies.js';
import { EXTENDED_COMPLIANCE, TRANSMITTER_TECHNOLOGY, hasRange, hex2, isCopperTechnology, partNumberSaysHalfMetre, sum8, type EepromImage } from './bytes.js';
import type { EepromDecode } from './decoded.js';
import { readIdentityFields } from './identity-fields.js';

// SFF-8636 upper page 00h offsets (absolute), per SFF-8636 2.11 and ethtool qsfp.h.
export const SFF8636 = {
  identifier: 0,
  revision: 1,
  identifierCopy: 128,
  connector: 130,
  compliance: 131,
  encoding: 139,
  brNominal: 140,
  om1OrAttenuation25g: 145,
  length: 146,
  deviceTech: 147,
  vendorName: [148, 163],
  vendorOui: 165,
  vendorPn: [168, 183],
  vendorRev: [184, 185],
  attenuation: { '2.5GHz': 186, '5.0GHz': 187, '7.0GHz': 188, '12.9GHz': 189 },
  ccBase: 191,
  extCompliance: 192,
  vendorSn: [196, 211],
  dateCode: [212, 219],
  extBaud: 222,
  ccExt: 223,
} as const;

// Decode an SFF-8636 (QSFP/QSFP+/QSFP28/QSFP56) image; fields whose bytes were not read stay empty and are named.
export function decodeSff8636(img: EepromImage, bytesRead: number): EepromDecode {
  const anomalies: string[] = [];
  const at = (i: number): number | null => img[i] ?? null;
  const id = readIdentityFields(img, { ...SFF8636, upperPageLabel: 'upper page 00h' }, anomalies);

  const tech = at(SFF8636.deviceTech);
  const transmitterCode = tech === null ? null : tech >> 4;
  const copper = transmitterCode !== null && isCopperTechnology(transmitterCode);
  const len = at(SFF8636.length);
  let lengthM = len === null || len === 0 ? null : len;
  // On a pluggable optic (optical transmitter, separable connector) byte 146 is the OM4 reach, not a cable length.
  const connector = at(SFF8636.connector);
  let om4: { om4LinkLengthM: number | null } | null = null;
  if (len !== null && len !== 0 && transmitterCode !== null && !copper && connector !== null && connector !== NO_SEPARABLE_CONNECTOR) {
    const reach = om4ReachOfByte146(len, hex2(connector));
    om4 = { om4LinkLengthM: reach.om4LinkLengthM };
    lengthM = null;
    anomalies.push(reach.note);
  }

  const attenuationDb: Record<string, number> = {};
  if (copper) {
    for (const [k, off] of Object.entries(SFF8636.attenuation)) {
      const v = at(off);
      if (v !== null) attenuationDb[k] = v;
    }
    const placeholder = dropPlaceholderAttenuation(attenuationDb, 'bytes 186-189');
    if (placeholder) anomalies.push(placeholder);
    // Byte 145 is attenuation at 25.78 GHz on copper (SFF-8636 2.11); 0 = not given by older modules.
    const a25 = at(SFF8636.om1OrAttenuation25g);
    if (a25) attenuationDb['25.8GHz'] = a25;
  }

  const checksums: EepromDecode['checksums'] = {};
  if (hasRange(img, 128, 191)) {
    const stored = img[191]!;
    const computed = sum8(img, 128, 190);
    checksums.ccBase = { stored, computed, ok: stored === computed };
    if (stored !== computed) anomalies.push(checksumNote('CC_BASE', 128, 190, stored, computed));
  }
  if (hasRange(img, 192, 223)) {
    const stored = img[223]!;
    const computed = sum8(img, 192, 222);
    checksums.ccExt = { stored, computed, ok: stored === computed };
    if (stored !== computed) anomalies.push(checksumNote('CC_EXT', 192, 222, stored, computed));
  }

  const comp = at(SFF8636.compliance);
  const ext = at(SFF8636.extCompliance);
  const extendedCompliance = comp !== null && comp & 0x80 && ext !== null ? { code: ext, text: EXTENDED_COMPLIANCE[ext] ?? `unknown (${hex2(ext)})` } : null;
  const br = at(SFF8636.brNominal);
  const baud = at(SFF8636.extBaud);
  const nominalRateGBd = br === null ? null : br !== 0xff ? br / 10 : baud === null ? null : baud / 4;

  const note = lengthResolutionNote(lengthM, id.vendorPn, partNumberSaysHalfMetre(id.vendorPn));
  if (note) anomalies.push(note);

  return {
    standard: 'SFF-8636',
    ...id,
    lengthM,
    ...om4,
    attenuationDb,
    ...(transmitterCode !== null ? { transmitterTechnology: TRANSMITTER_TECHNOLOGY[transmitterCode]! } : {}),
    anomalies,
    checksums,
    bytesRead,
    revisionCompliance: at(SFF8636.revision),
    connector,
    transmitterCode,
    extendedCompliance,
    nominalRateGBd,
    encoding: at(SFF8636.encoding),
  };
}
