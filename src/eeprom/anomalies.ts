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

// SFF-8636 connector code of a cable assembly (SFF-8024: no separable connector): DACs and active optical cables.
export const NO_SEPARABLE_CONNECTOR = 0x23;

// SFF-8636 byte 146 on a pluggable optic (an optical transmitter behind a separable connector) is not a cable length:
// SFF-8636 2.11 gives it as the link length supported on OM4 fibre in units of 2 m (0xff: more than 508 m). The OM4
// reach it states, in metres (null for 0 = not given and 0xff = beyond 508 m), and the note saying so.
export function om4ReachOfByte146(byte146: number, connector: string): { om4LinkLengthM: number | null; note: string } {
  const reach = byte146 === 0 || byte146 === 0xff ? null : byte146 * 2;
  const says = byte146 === 0xff ? 'beyond 508 m of OM4 fibre' : reach === null ? 'no OM4 reach' : `an OM4 fibre reach of ${reach} m (2 m units)`;
  return {
    om4LinkLengthM: reach,
    note: `length-is-om4-reach: byte 146 = ${byte146} on a pluggable optic (connector ${connector}) is ${says}, not a cable length (ethtool prints it as "Length (Copper or Active cable) : ${byte146}m")`,
  };
}
