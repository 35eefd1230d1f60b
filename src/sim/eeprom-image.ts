// The simulated cable's EEPROM as real bytes (SFF-8636 for QSFP56, CMIS page 00h for QSFP112), and the two ways
// ethtool 6.7 shows it: the decoded text of `ethtool -m` and the `hex on` dump. Checksums are computed, not typed.
import type { ScenarioEeprom } from './scenario.js';

function putAscii(img: Uint8Array, at: number, len: number, text: string): void {
  for (let i = 0; i < len; i++) img[at + i] = i < text.length ? text.charCodeAt(i) & 0x7f : 0x20;
}

function putOui(img: Uint8Array, at: number, oui: string): void {
  oui.split(':').forEach((h, i) => (img[at + i] = parseInt(h, 16) & 0xff));
}

function sum8(img: Uint8Array, from: number, to: number): number {
  let s = 0;
  for (let i = from; i <= to; i++) s += img[i]!;
  return s & 0xff;
}

// SFF-8636 lower page + upper page 00h of a passive 200G DAC (identifier 0x11, extended compliance 0x40).
export function sff8636Image(e: ScenarioEeprom, serial: string): Uint8Array {
  const img = new Uint8Array(256);
  img[0] = 0x11;
  img[1] = 0x08; // SFF-8636 Rev 2.8 (ethtool 6.7 prints "Unallocated")
  img[2] = 0x04; // flat memory
  img[128] = 0x11;
  img[129] = 0x00;
  img[130] = 0x23; // no separable connector
  img[131] = 0x88; // 40GBASE-CR4 + "see extended compliance"
  img[139] = 0x08; // PAM4
  img[140] = 0xff; // see byte 222
  img[145] = e.attenuationDb[3] > 0 ? Math.round(e.attenuationDb[3] * 1.6) : 0; // attenuation at 25.78 GHz
  img[146] = Math.max(1, Math.round(e.lengthM)); // whole metres only
  img[147] = 0xa0; // copper, unequalized
  putAscii(img, 148, 16, e.vendorName);
  putOui(img, 165, e.vendorOui);
  putAscii(img, 168, 16, e.vendorPn);
  putAscii(img, 184, 2, e.vendorRev);
  e.attenuationDb.forEach((db, i) => (img[186 + i] = Math.round(db) & 0xff));
  img[190] = 70; // max case temperature
  img[191] = sum8(img, 128, 190);
  img[192] = 0x40; // 50GBASE-CR, 100GBASE-CR2, or 200GBASE-CR4
  putAscii(img, 196, 16, serial);
  putAscii(img, 212, 8, e.dateCode);
  img[222] = 0x6a; // 26.5625 GBd in units of 250 MBd
  img[223] = sum8(img, 192, 222);
  return img;
}

// CMIS lower page + page 00h of a flat-memory passive copper module (identifier 0x1e).
export function cmisImage(e: ScenarioEeprom, serial: string): Uint8Array {
  const img = new Uint8Array(256);
  img[0] = 0x1e;
  img[1] = 0x40; // CMIS 4.0
  img[2] = 0x80; // flat memory
  img[3] = 0x03 << 1; // ModuleReady
  img[128] = 0x1e;
  putAscii(img, 129, 16, e.vendorName);
  putOui(img, 145, e.vendorOui);
  putAscii(img, 148, 16, e.vendorPn);
  putAscii(img, 164, 2, e.vendorRev);
  putAscii(img, 166, 16, serial);
  putAscii(img, 182, 8, e.dateCode);
  putAscii(img, 190, 10, '');
  img[200] = 0x00; // power class 1
  img[201] = 0x01; // 0.25 W
  img[202] = e.lengthM < 6.3 ? Math.round(e.lengthM * 10) & 0x3f : 0x40 | (Math.round(e.lengthM) & 0x3f); // x0.1 m or x1 m
  img[203] = 0x23;
  e.attenuationDb.forEach((db, i) => (img[204 + i] = Math.round(db) & 0xff));
  img[212] = 0x0a; // copper cable, unequalized
  img[222] = sum8(img, 128, 221);
  return img;
}

// `ethtool -m <if> [page 0 offset N length L] hex on` (ethtool dump_hex): absolute offsets, 16 bytes a row, trailing space.
export function formatHexDump(bytes: Uint8Array, offset: number, length: number): string {
  let out = 'Offset\t\tValues\n------\t\t------';
  for (let i = 0; i < length; i++) {
    if (i % 16 === 0) out += `\n0x${(offset + i).toString(16).padStart(4, '0')}:\t\t`;
    out += `${(bytes[offset + i] ?? 0).toString(16).padStart(2, '0')} `;
  }
  return `${out}\n`;
}

const line = (label: string, value: string) => `\t${label.padEnd(41)} : ${value}\n`;
const hex2 = (v: number) => `0x${v.toString(16).padStart(2, '0')}`;

function ascii(img: Uint8Array, at: number, len: number): string {
  let s = '';
  for (let i = 0; i < len; i++) {
    const c = img[at + i]!;
    s += c < 32 || c > 126 ? '_' : String.fromCharCode(c);
  }
  return s.trimEnd();
}

function oui(img: Uint8Array, at: number): string {
  return [0, 1, 2].map((i) => img[at + i]!.toString(16).padStart(2, '0')).join(':');
}

// `ethtool -m <if>` decoded text as ethtool 6.7 prints it (old labels, one line per matching compliance bit).
export function formatModuleText(img: Uint8Array): string {
  return img[0] === 0x11 ? sff8636Text(img) : cmisText(img);
}

function sff8636Text(p: Uint8Array): string {
  let out = '';
  out += line('Identifier', `${hex2(p[128]!)} (QSFP28)`);
  out += line('Extended identifier', hex2(p[129]!));
  out += line('Extended identifier description', '1.5W max. Power consumption');
  out += line('Extended identifier description', 'No CDR in TX, No CDR in RX');
  out += line('Extended identifier description', 'High Power Class (> 3.5 W) not enabled');
  out += line('Connector', `${hex2(p[130]!)} (No separable connector)`);
  out += line('Transceiver codes', Array.from(p.slice(131, 139), hex2).join(' '));
  if (p[131]! & 0x08) out += line('Transceiver type', '40G Ethernet: 40G Base-CR4');
  if (p[131]! & 0x80 && p[192] === 0x40) out += line('Transceiver type', 'Extended: 50GBASE-CR, 100GBASE-CR2, or 200GBASE-CR4');
  out += line('Encoding', `${hex2(p[139]!)} (${p[139] === 0x08 ? 'PAM4' : 'unspecified'})`);
  out += line('BR, Nominal', `${p[140]! * 100}Mbps`);
  out += line('Rate identifier', hex2(p[141]!));
  out += line('Length (SMF,km)', `${p[142]}km`);
  out += line('Length (OM3 50um)', `${p[143]! * 2}m`);
  out += line('Length (OM2 50um)', `${p[144]}m`);
  out += line('Length (OM1 62.5um)', `${p[145]}m`);
  out += line('Length (Copper or Active cable)', `${p[146]}m`);
  out += line('Transmitter technology', `${hex2(p[147]!)} (Copper cable unequalized)`);
  out += line('Attenuation at 2.5GHz', `${p[186]}db`);
  out += line('Attenuation at 5.0GHz', `${p[187]}db`);
  out += line('Attenuation at 7.0GHz', `${p[188]}db`);
  out += line('Attenuation at 12.9GHz', `${p[189]}db`);
  out += line('Vendor name', ascii(p, 148, 16));
  out += line('Vendor OUI', oui(p, 165));
  out += line('Vendor PN', ascii(p, 168, 16));
  out += line('Vendor rev', ascii(p, 184, 2));
  out += line('Vendor SN', ascii(p, 196, 16));
  out += line('Date code', ascii(p, 212, 8));
  out += line('Revision Compliance', p[1] === 0x07 ? 'SFF-8636 Rev 2.5/2.6/2.7' : 'Unallocated');
  return out;
}

function cmisText(p: Uint8Array): string {
  const mult = [0.1, 1, 10, 100][p[202]! >> 6]!;
  let out = '';
  out += line('Identifier', `${hex2(p[0]!)} (QSFP+ or later with Common Management Interface Specification (CMIS))`);
  out += line('Power class', `${(p[200]! >> 5) + 1}`);
  out += line('Max power', `${(p[201]! * 0.25).toFixed(2)}W`);
  out += line('Connector', `${hex2(p[203]!)} (No separable connector)`);
  out += line('Cable assembly length', `${((p[202]! & 0x3f) * mult).toFixed(2)}m`);
  out += line('Transmitter technology', `${hex2(p[212]!)} (Copper cable, unequalized)`);
  out += line('Attenuation at 5GHz', `${p[204]}db`);
  out += line('Attenuation at 7GHz', `${p[205]}db`);
  out += line('Attenuation at 12.9GHz', `${p[206]}db`);
  out += line('Attenuation at 25.8GHz', `${p[207]}db`);
  out += line('Vendor name', ascii(p, 129, 16));
  out += line('Vendor OUI', oui(p, 145));
  out += line('Vendor PN', ascii(p, 148, 16));
  out += line('Vendor rev', ascii(p, 164, 2));
  out += line('Vendor SN', ascii(p, 166, 16));
  out += line('Date code', ascii(p, 182, 8));
  out += line('Revision compliance', `Rev. ${p[1]! >> 4}.${p[1]! & 0x0f}`);
  out += line('Module State', `${hex2((p[3]! >> 1) & 0x07)} (ModuleReady)`);
  return out;
}
