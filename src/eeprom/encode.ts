// Simulator use: img = encodeSff8636(fields) or encodeCmis(fields); answer
//   `ethtool -m IF page 0 offset N length L hex on` with formatHexDump of those bytes (src/sim/format-ethtool-module.ts),
//   `ethtool -m IF` with formatEthtoolModuleText(img, { style: '6.7' }).
import { IMAGE_SIZE, isCopperTechnology, sum8 } from './bytes.js';
import { CMIS } from './cmis.js';
import { SFF8636 } from './sff8636.js';
import type { CmisApplication } from './decoded.js';

// The simulator's text form lives beside the encoders.
export { formatEthtoolModuleText } from './format-text.js';

// What the simulator states about a cable; encoders turn it into the 256 bytes a real module would hold.
export interface EepromFields {
  identifier?: number; // default 0x11 (SFF-8636) or 0x1e (CMIS)
  revision?: number; // byte 1; default 0x08 (SFF-8636 2.8+) or 0x50 (CMIS 5.0)
  vendorName: string;
  vendorOui: string; // "xx:xx:xx"
  vendorPn: string;
  vendorRev: string;
  vendorSn: string;
  dateCode: string; // YYMMDD + optional 2-char lot
  lengthM: number | null;
  attenuationDb: Record<string, number>; // keys "2.5GHz" "5.0GHz" "7.0GHz" "12.9GHz" "25.8GHz"
  transmitterTechnology?: number; // 4-bit media technology code; default 0xa (copper, unequalized)
  compliance?: number; // SFF-8636 byte 131, e.g. 0x08 = 40G Base-CR4 (as Spark DACs advertise)
  extendedCompliance?: number; // SFF-8636 byte 192 (sets byte 131 bit 7); e.g. 0x40 200GBASE-CR4
  encoding?: number; // SFF-8636 byte 139; default 0x08 (PAM4)
  nominalRateGBd?: number; // SFF-8636 bytes 140/222; default 26.5 GBd (200GBASE-CR4 lane)
  badChecksum?: 'ccBase' | 'ccExt' | 'page00'; // store a deliberately wrong checksum
  applications?: CmisApplication[]; // CMIS application descriptors (bytes 86-117); none written when absent
}

// Encoder misuse is a simulator bug, so it throws a plain Error naming the field.
function put(img: Uint8Array, label: string, text: string, [from, to]: readonly [number, number]): void {
  const width = to - from + 1;
  if (text.length > width) throw new Error(`${label}: "${text}" longer than ${width} bytes`);
  if (!/^[\x20-\x7e]*$/.test(text)) throw new Error(`${label}: "${text}" is not printable ASCII`);
  for (let k = 0; k < width; k++) img[from + k] = k < text.length ? text.charCodeAt(k) : 0x20;
}

function putOui(img: Uint8Array, oui: string, at: number): void {
  if (!/^[0-9a-f]{2}:[0-9a-f]{2}:[0-9a-f]{2}$/i.test(oui)) throw new Error(`vendorOui: "${oui}" is not xx:xx:xx`);
  oui.split(':').forEach((h, k) => (img[at + k] = parseInt(h, 16)));
}

function byteValue(label: string, v: number): number {
  if (!Number.isInteger(v) || v < 0 || v > 255) throw new Error(`${label}: ${v} is not a byte value`);
  return v;
}

function putAttenuation(img: Uint8Array, att: Record<string, number>, offsets: Readonly<Record<string, number>>): void {
  for (const [k, v] of Object.entries(att)) {
    const at = offsets[k];
    if (at === undefined) throw new Error(`attenuationDb: no byte for "${k}" (have ${Object.keys(offsets).join(', ')})`);
    img[at] = byteValue(`attenuationDb[${k}]`, v);
  }
}

function putVendor(img: Uint8Array, f: EepromFields, map: typeof SFF8636 | typeof CMIS): void {
  put(img, 'vendorName', f.vendorName, map.vendorName);
  putOui(img, f.vendorOui, map.vendorOui);
  put(img, 'vendorPn', f.vendorPn, map.vendorPn);
  put(img, 'vendorRev', f.vendorRev, map.vendorRev);
  put(img, 'vendorSn', f.vendorSn, map.vendorSn);
  put(img, 'dateCode', f.dateCode, map.dateCode);
}

function putChecksum(img: Uint8Array, from: number, to: number, bad: boolean): void {
  const c = sum8(Array.from(img), from, to);
  img[to + 1] = bad ? (c + 1) & 0xff : c;
}

// A QSFP28/QSFP56 passive DAC image (SFF-8636 lower page + upper page 00h) with valid CC_BASE/CC_EXT.
export function encodeSff8636(f: EepromFields): Uint8Array {
  const img = new Uint8Array(IMAGE_SIZE);
  const id = byteValue('identifier', f.identifier ?? 0x11);
  const tech = f.transmitterTechnology ?? 0xa;
  img[0] = id;
  img[1] = byteValue('revision', f.revision ?? 0x08); // 0x08 = Rev 2.8-2.10 (ethtool: "Unallocated"), as on Spark DACs
  img[2] = 0x04; // flat memory
  img[128] = id;
  img[130] = 0x23; // no separable connector
  img[131] = byteValue('compliance', f.compliance ?? 0);
  if (f.extendedCompliance !== undefined) {
    img[131] |= 0x80;
    img[192] = byteValue('extendedCompliance', f.extendedCompliance);
  }
  img[139] = byteValue('encoding', f.encoding ?? 0x08);
  const rate = f.nominalRateGBd ?? 26.5;
  if (rate * 10 <= 254) img[140] = Math.round(rate * 10);
  else {
    img[140] = 0xff;
    img[222] = byteValue('nominalRateGBd', Math.round(rate * 4));
  }
  // Byte 146 counts whole metres: a 0.5 m cable says 1 m, as real ones do.
  img[146] = f.lengthM === null ? 0 : byteValue('lengthM', Math.max(1, Math.round(f.lengthM)));
  img[147] = byteValue('transmitterTechnology', tech) << 4;
  putVendor(img, f, SFF8636);
  putAttenuation(img, f.attenuationDb, { ...SFF8636.attenuation, '25.8GHz': SFF8636.om1OrAttenuation25g });
  img[190] = 70; // max case temperature
  putChecksum(img, 128, 190, f.badChecksum === 'ccBase');
  putChecksum(img, 192, 222, f.badChecksum === 'ccExt');
  return img;
}

// CMIS byte 202 for a length in metres: the finest multiplier whose base count fits 6 bits.
export function encodeCmisLength(m: number): number {
  for (const [code, mult] of [
    [0, 0.1],
    [1, 1],
    [2, 10],
    [3, 100],
  ] as const) {
    const base = Math.round(m / mult);
    if (base <= 63 && Math.abs(base * mult - m) < 1e-9) return (code << 6) | base;
  }
  throw new Error(`lengthM: ${m} m cannot be encoded in CMIS byte 202`);
}

// A QSFP112/QSFP-DD passive copper image (CMIS lower page + page 00h, flat memory) with a valid page checksum.
export function encodeCmis(f: EepromFields): Uint8Array {
  const img = new Uint8Array(IMAGE_SIZE);
  const id = byteValue('identifier', f.identifier ?? 0x1e);
  const tech = byteValue('transmitterTechnology', f.transmitterTechnology ?? 0xa);
  img[0] = id;
  img[1] = byteValue('revision', f.revision ?? 0x50); // CMIS 5.0
  img[2] = 0x80; // flat memory
  img[3] = 0x06; // ModuleReady
  img[26] = 0x40; // LowPwrAllowRequestHW on, LowPwrRequestSW off (as the real Arista module reports)
  if (isCopperTechnology(tech)) img[85] = 0x03; // module type: passive copper
  const apps = f.applications ?? [];
  if (apps.length > 8) throw new Error(`applications: ${apps.length} descriptors, CMIS page 00h holds 8`);
  apps.forEach((a, i) => {
    const at = CMIS.applications[0] + 4 * i;
    img[at] = byteValue('hostInterface', a.hostInterface);
    img[at + 1] = byteValue('mediaInterface', a.mediaInterface);
    img[at + 2] = (byteValue('hostLanes', a.hostLanes) << 4) | byteValue('mediaLanes', a.mediaLanes);
    img[at + 3] = 0x01; // host lane assignment: starting at lane 1
  });
  if (apps.length > 0 && apps.length < 8) img[CMIS.applications[0] + 4 * apps.length] = 0xff; // end of the list
  img[128] = id;
  putVendor(img, f, CMIS);
  put(img, 'CLEI', '', [190, 199]);
  img[200] = 0x00; // power class 1
  img[201] = 0x01; // 0.25 W
  img[202] = f.lengthM === null ? 0 : encodeCmisLength(f.lengthM);
  img[203] = 0x23;
  putAttenuation(img, f.attenuationDb, CMIS.attenuation);
  img[212] = tech;
  putChecksum(img, 128, 221, f.badChecksum === 'page00');
  return img;
}

// Exactly ethtool's dump_hex(): header, rows labelled with the absolute offset of their first byte, trailing space.
export function formatHexDump(bytes: ArrayLike<number>, startOffset = 0): string {
  let out = 'Offset\t\tValues\n------\t\t------';
  for (let i = 0; i < bytes.length; i++) {
    if (i % 16 === 0) out += `\n0x${(i + startOffset).toString(16).padStart(4, '0')}:\t\t`;
    out += `${(bytes[i]! & 0xff).toString(16).padStart(2, '0')} `;
  }
  return `${out}\n`;
}
