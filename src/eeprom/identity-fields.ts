import { nonPrintableNote } from './anomalies.js';
import { asciiField, hasRange, hex2, ouiField, type EepromImage } from './bytes.js';

// Where a memory map keeps the identity fields (absolute offsets; SFF-8636 and CMIS differ only in these numbers).
export interface IdentityLayout {
  vendorName: readonly [number, number];
  vendorOui: number;
  vendorPn: readonly [number, number];
  vendorRev: readonly [number, number];
  vendorSn: readonly [number, number];
  dateCode: readonly [number, number];
  upperPageLabel: string; // how the upper 128 bytes are named in anomaly notes
}

// The identity fields both maps share, plus the notes on bytes that were not read or do not print: the
// identifier (byte 0, or its copy at 128), vendor name/PN/rev/SN, date code and OUI.
export function readIdentityFields(img: EepromImage, layout: IdentityLayout, anomalies: string[]) {
  const at = (i: number): number | null => img[i] ?? null;
  const identifier = at(0) ?? at(128) ?? 0;
  if (at(0) === null && at(128) !== null) anomalies.push('missing-bytes: lower page (0-127) not read; identifier taken from byte 128');
  const upperRead = img.slice(128, 256).filter((b) => b !== undefined).length;
  if (upperRead < 128) anomalies.push(`missing-bytes: ${layout.upperPageLabel} read ${upperRead} of 128 bytes; fields whose bytes are missing are left empty`);
  const b0 = at(0);
  const b128 = at(128);
  if (b0 !== null && b128 !== null && b0 !== b128) anomalies.push(`identifier-mismatch: byte 0 is ${hex2(b0)} but byte 128 is ${hex2(b128)}`);

  const text = (label: string, [from, to]: readonly [number, number], vendor = true): string => {
    let end = to;
    while (end >= from && img[end] === undefined) end--;
    if (end < from || !hasRange(img, from, end)) return '';
    if (end < to) anomalies.push(`missing-bytes: ${label} only bytes ${from}-${end} of ${from}-${to} read; value may be cut short`);
    const f = asciiField(img, from, end);
    if (vendor && f.nonPrintable.length) anomalies.push(nonPrintableNote(label, f.nonPrintable));
    return f.text;
  };
  return {
    identifier,
    vendorName: text('Vendor name', layout.vendorName),
    vendorPn: text('Vendor PN', layout.vendorPn),
    vendorRev: text('Vendor rev', layout.vendorRev),
    vendorSn: text('Vendor SN', layout.vendorSn),
    dateCode: text('Date code', layout.dateCode, false),
    vendorOui: hasRange(img, layout.vendorOui, layout.vendorOui + 2) ? ouiField(img, layout.vendorOui) : '',
  };
}
