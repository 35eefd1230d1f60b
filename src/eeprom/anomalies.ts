import { hex2 } from './bytes.js';

// Passive copper never loses 0 dB at GHz frequencies: a 0 is an unfilled field, kept out of attenuationDb.
export function dropPlaceholderAttenuation(att: Record<string, number>, where: string): string | null {
  const zeros = Object.keys(att).filter((k) => att[k] === 0);
  if (zeros.length === 0) return null;
  for (const k of zeros) delete att[k];
  return `attenuation-placeholder: 0 dB at ${zeros.join(', ')} on a copper cable (${where}): placeholder, not a measured value`;
}

// SFF-8636 byte 146 counts whole metres, so a 0.5 m DAC reads 1 m.
export function lengthResolutionNote(lengthM: number | null, vendorPn: string, halfMetrePn: boolean): string | null {
  if (lengthM !== 1) return null;
  return halfMetrePn
    ? `length-resolution: Vendor PN "${vendorPn}" names a 0.5 m cable but SFF-8636 byte 146 cannot express < 1 m (reads 1 m)`
    : 'length-resolution: SFF-8636 byte 146 counts whole metres; 1 m may also be a 0.5 m cable';
}

// Checksum mismatch: one line naming the bytes summed and both values.
export function checksumNote(name: string, from: number, to: number, stored: number, computed: number): string {
  return `checksum: ${name} over bytes ${from}-${to} is ${hex2(computed)} but byte ${to + 1} stores ${hex2(stored)}`;
}

// Vendor field bytes outside printable ASCII (ethtool shows them as `_`).
export function nonPrintableNote(label: string, offsets: number[]): string {
  return `vendor-field-nonprintable: ${label} has non-printable byte(s) at offset ${offsets.join(', ')} (shown as _)`;
}
