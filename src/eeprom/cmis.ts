import { checksumNote, dropPlaceholderAttenuation } from './anomalies.js';
import { TRANSMITTER_TECHNOLOGY, hasRange, isCopperTechnology, sum8, type EepromImage } from './bytes.js';
import type { CmisApplication, EepromDecode } from './decoded.js';
import { readIdentityFields } from './identity-fields.js';

// CMIS lower page and page 00h offsets (absolute), per CMIS 5.2 and ethtool cmis.h.
export const CMIS = {
  identifier: 0,
  revision: 1,
  vendorName: [129, 144],
  vendorOui: 145,
  vendorPn: [148, 163],
  vendorRev: [164, 165],
  vendorSn: [166, 181],
  dateCode: [182, 189],
  length: 202,
  connector: 203,
  attenuation: { '5.0GHz': 204, '7.0GHz': 205, '12.9GHz': 206, '25.8GHz': 207 },
  mediaTech: 212,
  checksum: 222,
  mediaType: 85,
  applications: [86, 117], // up to 8 descriptors of 4 bytes; host interface 0xff ends the list
} as const;

// The application descriptors of the lower page, up to the first unused one (host interface 0x00 or 0xff);
// undefined when those bytes were not read.
export function readApplications(img: EepromImage): CmisApplication[] | undefined {
  const [from, to] = CMIS.applications;
  if (!hasRange(img, from, to)) return undefined;
  const out: CmisApplication[] = [];
  for (let at = from; at + 3 <= to; at += 4) {
    const host = img[at]!;
    if (host === 0x00 || host === 0xff) break;
    out.push({ hostInterface: host, mediaInterface: img[at + 1]!, hostLanes: img[at + 2]! >> 4, mediaLanes: img[at + 2]! & 0x0f });
  }
  return out;
}

// Byte 202: bits 7-6 pick the multiplier (0.1, 1, 10, 100 m), bits 5-0 the base count.
export function cmisLengthM(b: number): number {
  const mult = [0.1, 1, 10, 100][b >> 6]!;
  return Math.round((b & 0x3f) * mult * 10) / 10;
}

// Decode a CMIS (QSFP-DD/OSFP/QSFP112) lower page + page 00h image; missing bytes leave fields empty and are named.
export function decodeCmis(img: EepromImage, bytesRead: number): EepromDecode {
  const anomalies: string[] = [];
  const at = (i: number): number | null => img[i] ?? null;
  const id = readIdentityFields(img, { ...CMIS, upperPageLabel: 'page 00h' }, anomalies);

  const transmitterCode = at(CMIS.mediaTech);
  const copper = transmitterCode !== null && isCopperTechnology(transmitterCode);
  const len = at(CMIS.length);
  const lengthM = len === null || (len & 0x3f) === 0 ? null : cmisLengthM(len);

  const attenuationDb: Record<string, number> = {};
  if (copper) {
    for (const [k, off] of Object.entries(CMIS.attenuation)) {
      const v = at(off);
      if (v !== null) attenuationDb[k] = v;
    }
    const placeholder = dropPlaceholderAttenuation(attenuationDb, 'bytes 204-207');
    if (placeholder) anomalies.push(placeholder);
  }

  const applications = readApplications(img);
  const checksums: EepromDecode['checksums'] = {};
  if (hasRange(img, 128, 222)) {
    const stored = img[222]!;
    const computed = sum8(img, 128, 221);
    checksums.page00 = { stored, computed, ok: stored === computed };
    if (stored !== computed) anomalies.push(checksumNote('page 00h checksum', 128, 221, stored, computed));
  }

  return {
    standard: 'CMIS',
    ...id,
    lengthM,
    attenuationDb,
    ...(transmitterCode !== null && transmitterCode < 16 ? { transmitterTechnology: TRANSMITTER_TECHNOLOGY[transmitterCode]! } : {}),
    anomalies,
    checksums,
    bytesRead,
    revisionCompliance: at(CMIS.revision),
    connector: at(CMIS.connector),
    transmitterCode,
    extendedCompliance: null,
    nominalRateGBd: null,
    mediaType: at(CMIS.mediaType),
    ...(applications ? { applications } : {}),
  };
}
