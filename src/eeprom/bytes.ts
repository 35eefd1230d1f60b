// A module EEPROM as read: absolute offsets 0..255 (lower page + upper page 00h); bytes not read are undefined.
export type EepromImage = ReadonlyArray<number | undefined>;

// Size of the image the decoders look at: lower page 0-127 plus upper page 00h 128-255.
export const IMAGE_SIZE = 256;

// Whether every byte in [from, to] (inclusive) was read.
export function hasRange(img: EepromImage, from: number, to: number): boolean {
  for (let i = from; i <= to; i++) if (img[i] === undefined) return false;
  return true;
}

// Low 8 bits of the sum of bytes [from, to]: the SFF-8636 CC_BASE/CC_EXT and CMIS page checksum rule.
export function sum8(img: EepromImage, from: number, to: number): number {
  let s = 0;
  for (let i = from; i <= to; i++) s = (s + (img[i] ?? 0)) & 0xff;
  return s;
}

// An ASCII field the way ethtool prints it: trailing spaces trimmed, bytes outside 32..126 shown as `_`.
export function asciiField(img: EepromImage, from: number, to: number): { text: string; nonPrintable: number[] } {
  let end = to;
  while (end >= from && img[end] === 0x20) end--;
  let text = '';
  const nonPrintable: number[] = [];
  for (let i = from; i <= end; i++) {
    const b = img[i] ?? 0;
    if (b >= 32 && b <= 126) text += String.fromCharCode(b);
    else {
      text += '_';
      nonPrintable.push(i);
    }
  }
  return { text, nonPrintable };
}

// Vendor OUI bytes as ethtool prints them: `xx:xx:xx`.
export function ouiField(img: EepromImage, from: number): string {
  return [0, 1, 2].map((k) => (img[from + k] ?? 0).toString(16).padStart(2, '0')).join(':');
}

// `0x%02x`, the way ethtool prints code bytes.
export function hex2(b: number): string {
  return `0x${b.toString(16).padStart(2, '0')}`;
}

// Media/transmitter technology (SFF-8636 byte 147 high nibble, CMIS byte 212), ethtool >= 6.14 wording.
export const TRANSMITTER_TECHNOLOGY: readonly string[] = [
  '850 nm VCSEL',
  '1310 nm VCSEL',
  '1550 nm VCSEL',
  '1310 nm FP',
  '1310 nm DFB',
  '1550 nm DFB',
  '1310 nm EML',
  '1550 nm EML',
  'Others/Undefined',
  '1490 nm DFB',
  'Copper cable, unequalized',
  'Copper cable, passive equalized',
  'Copper cable, near and far end limiting active equalizers',
  'Copper cable, far end limiting active equalizers',
  'Copper cable, near end limiting active equalizers',
  'Copper cable, linear active equalizers',
];

// Technology codes 0xA..0xF are copper cables (passive or active); only they carry attenuation values.
export function isCopperTechnology(code: number): boolean {
  return code >= 0xa && code <= 0xf;
}

// SFF-8024 identifiers decoded with the SFF-8636 map (QSFP, QSFP+, QSFP28; QSFP56 DACs say 0x11 too).
export const SFF8636_IDENTIFIERS: ReadonlySet<number> = new Set([0x0c, 0x0d, 0x11]);
// SFF-8024 identifiers decoded with the CMIS map (QSFP-DD, OSFP, QSFP+ or later with CMIS, e.g. QSFP112).
export const CMIS_IDENTIFIERS: ReadonlySet<number> = new Set([0x18, 0x19, 0x1e]);

// SFF-8024 identifier names (ethtool wording) for the codes a Spark cage can report, plus SFP for clear errors.
export const IDENTIFIER_NAMES: Readonly<Record<number, string>> = {
  0x03: 'SFP',
  0x0c: 'QSFP',
  0x0d: 'QSFP+',
  0x11: 'QSFP28',
  0x18: 'QSFP-DD Double Density 8X Pluggable Transceiver (INF-8628)',
  0x19: 'OSFP 8X Pluggable Transceiver',
  0x1e: 'QSFP+ or later with Common Management Interface Specification (CMIS)',
};

// SFF-8024 extended compliance codes (SFF-8636 byte 192) seen on DACs; others are named by their code.
export const EXTENDED_COMPLIANCE: Readonly<Record<number, string>> = {
  0x0b: '100GBASE-CR4 or 25GBASE-CR CA-L',
  0x0c: '25GBASE-CR CA-S',
  0x0d: '25GBASE-CR CA-N',
  0x3f: '100GBASE-CR1, 200GBASE-CR2 or 400GBASE-CR4',
  0x40: '50GBASE-CR, 100GBASE-CR2, or 200GBASE-CR4',
};

// A part number that names a 0.5 m cable ("-0.5", "0.5M", "CU0.5M", "0M5"): SFF-8636 can only say 1 m for it.
export function partNumberSaysHalfMetre(pn: string): boolean {
  return /(^|[^0-9.])0\.5($|[^0-9])|0M5/i.test(pn);
}
