// What class of cable the EEPROM says it is, from the bytes that say it (never from how the link trained): the
// SFF-8024 identifier (form factor), SFF-8636 extended compliance byte 192 and nominal bit rate (140, or 222 when 140
// is 0xff), CMIS application descriptors (host electrical interface codes). docs/formats.md §4; SFF-8024 tables 4-4 and 4-5.
import type { CableFamily } from '../domain/cable.js';
import { hex2 } from './bytes.js';
import type { EepromDecode } from './decoded.js';

// The class of a cable as its EEPROM states it, and which bytes said so.
export interface CableClass {
  family: CableFamily;
  laneGbps: 25 | 50 | 100 | null; // per-lane class the module advertises
  basis: string;
}

// The decoded fields classification reads (journals of older versions lack the CMIS applications and the encoding).
export type ClassifiableIdentity = Pick<EepromDecode, 'standard' | 'identifier'> &
  Partial<Pick<EepromDecode, 'extendedCompliance' | 'nominalRateGBd' | 'encoding' | 'applications'>>;

type LaneGbps = NonNullable<CableClass['laneGbps']>;

// SFF-8636 byte 192 (SFF-8024 table 4-4) codes of copper and active-copper cables, by lane class.
const EXTENDED_LANE_GBPS: Readonly<Record<number, LaneGbps>> = {
  0x08: 25, // 100G ACC or 25GAUI C2M ACC
  0x0b: 25, // 100GBASE-CR4, 25GBASE-CR CA-L
  0x0c: 25, // 25GBASE-CR CA-S
  0x0d: 25, // 25GBASE-CR CA-N
  0x19: 25, // 100G ACC or 25GAUI C2M ACC
  0x30: 50, // ACC with 50GAUI, 100GAUI-2 or 200GAUI-4 C2M
  0x32: 50,
  0x3f: 100, // 100GBASE-CR1, 200GBASE-CR2 or 400GBASE-CR4
  0x40: 50, // 50GBASE-CR, 100GBASE-CR2 or 200GBASE-CR4
};

// CMIS host electrical interface IDs (SFF-8024 table 4-5) by lane class: AUI and copper (CR) interfaces.
const HOST_LANE_GBPS: Readonly<Record<number, LaneGbps>> = {
  0x05: 25,
  0x08: 25,
  0x09: 25,
  0x0b: 25,
  0x0c: 25,
  0x0e: 25,
  0x10: 25,
  0x14: 25,
  0x15: 25,
  0x16: 25,
  0x1a: 25,
  0x0a: 50,
  0x0d: 50,
  0x0f: 50,
  0x11: 50,
  0x18: 50,
  0x1b: 50,
  0x1c: 50,
  0x1d: 50,
  0x46: 100,
  0x47: 100,
  0x48: 100,
  0x49: 100,
  0x4b: 100,
  0x4c: 100,
  0x4d: 100,
  0x4e: 100,
  0x4f: 100,
  0x50: 100,
  0x51: 100,
  0x52: 100,
};

// SFF-8024 identifiers of the QSFP form factor a Spark cage takes (QSFP+, QSFP28 and later with SFF-8636, QSFP+ or later with CMIS).
const QSFP_IDENTIFIERS: ReadonlySet<number> = new Set([0x0c, 0x0d, 0x11, 0x1e]);

const FAMILY: Record<LaneGbps, CableFamily> = { 25: 'QSFP28', 50: 'QSFP56', 100: 'QSFP112' };
const CLASS_TEXT: Record<LaneGbps, string> = { 25: '100G class, 25G lanes', 50: '200G class, 50G PAM4 lanes', 100: '400G class, 100G PAM4 lanes' };

// Lane class from a nominal signalling rate (GBd): ~53 GBd is 100G PAM4, ~26 GBd is 50G PAM4 or 25G NRZ (the
// encoding byte tells them apart: 0x08 PAM4).
function laneOfRate(gbd: number, encoding: number | null | undefined): LaneGbps | null {
  if (gbd >= 50 && gbd <= 60) return 100;
  if (gbd >= 25 && gbd < 30) return encoding === 0x08 ? 50 : encoding === null || encoding === undefined ? null : 25;
  return null;
}

// Classify a cable from its decoded EEPROM; 'unknown' says why when the bytes do not tell.
export function classifyCable(id: ClassifiableIdentity): CableClass {
  const unknown = (why: string): CableClass => ({ family: 'unknown', laneGbps: null, basis: why });
  const form = QSFP_IDENTIFIERS.has(id.identifier);
  let lane: LaneGbps;
  let basis: string;
  if (id.standard === 'SFF-8636') {
    // A decoded identity comes back from a journal too: a field that is not a byte is treated as not read.
    const ext = typeof id.extendedCompliance?.code === 'number' ? id.extendedCompliance : null;
    const rate = id.nominalRateGBd ?? null;
    const byRate = rate === null ? null : laneOfRate(rate, id.encoding);
    if (ext && EXTENDED_LANE_GBPS[ext.code] !== undefined) {
      lane = EXTENDED_LANE_GBPS[ext.code]!;
      basis = `SFF-8636 byte 192 = ${hex2(ext.code)} (${ext.text})`;
      if (byRate !== null && byRate !== lane) basis += `; the nominal rate ${rate} GBd says ${byRate}G lanes`;
    } else if (byRate !== null) {
      lane = byRate;
      basis = `SFF-8636 nominal rate ${rate} GBd${id.encoding === 0x08 ? ', PAM4' : ''}${ext ? ` (byte 192 = ${hex2(ext.code)} names no copper class)` : ''}`;
    } else {
      return unknown(
        `SFF-8636: ${ext ? `byte 192 = ${hex2(ext.code)} names no copper class` : 'no extended compliance code (byte 192)'} and ${rate === null ? 'no nominal rate read' : `nominal rate ${rate} GBd`}`,
      );
    }
  } else {
    const apps = Array.isArray(id.applications) ? id.applications.filter((a) => typeof a?.hostInterface === 'number') : undefined;
    if (!apps) return unknown('CMIS application descriptors (lower page bytes 86-117) not read');
    const known = apps.filter((a) => HOST_LANE_GBPS[a.hostInterface] !== undefined);
    if (known.length === 0)
      return unknown(`CMIS: no application with a known host interface (${apps.map((a) => hex2(a.hostInterface)).join(', ') || 'none advertised'})`);
    const best = known.reduce((w, a) => (HOST_LANE_GBPS[a.hostInterface]! > HOST_LANE_GBPS[w.hostInterface]! ? a : w));
    lane = HOST_LANE_GBPS[best.hostInterface]!;
    basis = `CMIS application host interface ${hex2(best.hostInterface)} (${best.hostLanes} lanes)`;
  }
  if (!form) return unknown(`identifier ${hex2(id.identifier)} is not a QSFP module; ${basis}`);
  return { family: FAMILY[lane], laneGbps: lane, basis: `${CLASS_TEXT[lane]}: ${basis}` };
}
