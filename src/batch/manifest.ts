import { UsageError } from '../domain/errors.js';

// One cable of the box, as the operator listed it.
export interface ManifestCable {
  label: string;
  line: number; // 1-based line in the manifest file
  expectedPn?: string;
  expectedSerial?: string;
  scenario?: string; // simulated lab only: the scenario of this cable (`scenario[=SERIAL]`)
}

const COLUMNS: Record<string, keyof Omit<ManifestCable, 'line'>> = {
  label: 'label',
  pn: 'expectedPn',
  part_number: 'expectedPn',
  partnumber: 'expectedPn',
  serial: 'expectedSerial',
  scenario: 'scenario',
};
const LABEL = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const FIELD = /^[\x21-\x7e](?:[\x20-\x7e]*[\x21-\x7e])?$/;

// Parse the batch manifest (CSV with a header: label, optional pn/part_number, serial, scenario); one bad
// field is a one-line UsageError naming file, line and field, never a partial batch.
export function parseManifest(text: string, file: string): ManifestCable[] {
  const lines = text.replace(/^\uFEFF/, '').split(/\r?\n/);
  const bad = (line: number, what: string): never => {
    throw new UsageError(`${file}:${line}: ${what}`);
  };
  const headerAt = lines.findIndex((l) => l.trim() !== '' && !l.trimStart().startsWith('#'));
  if (headerAt < 0) bad(1, 'empty manifest: expected a header line such as "label,pn,serial"');
  const header = lines[headerAt]!.split(',').map((h) => h.trim().toLowerCase());
  const keys = header.map((h) => COLUMNS[h] ?? bad(headerAt + 1, `unknown column "${h}" (known: ${Object.keys(COLUMNS).join(', ')})`));
  if (!keys.includes('label')) bad(headerAt + 1, 'the header has no "label" column');
  if (new Set(keys).size !== keys.length) bad(headerAt + 1, 'a column appears twice');
  const out: ManifestCable[] = [];
  const seen = new Map<string, number>();
  for (let i = headerAt + 1; i < lines.length; i++) {
    const raw = lines[i]!;
    if (raw.trim() === '' || raw.trimStart().startsWith('#')) continue;
    if (raw.includes('"')) bad(i + 1, 'quoted fields are not supported: labels, part numbers and serials need no commas or quotes');
    const cells = raw.split(',').map((c) => c.trim());
    if (cells.length !== keys.length) bad(i + 1, `expected ${keys.length} fields (${header.join(',')}), got ${cells.length}`);
    const cable: ManifestCable = { label: '', line: i + 1 };
    keys.forEach((k, j) => {
      const v = cells[j]!;
      if (k === 'label') {
        if (!LABEL.test(v)) bad(i + 1, `field "label": "${v}" must be 1-64 of A-Z a-z 0-9 . _ - (it names the report folder)`);
        cable.label = v;
      } else if (v !== '') {
        if (!FIELD.test(v) || v.length > 64) bad(i + 1, `field "${header[j]}": "${v}" is not printable ASCII of at most 64 characters`);
        cable[k] = v;
      }
    });
    const dup = seen.get(cable.label);
    if (dup !== undefined) bad(i + 1, `field "label": "${cable.label}" already used on line ${dup}`);
    seen.set(cable.label, i + 1);
    out.push(cable);
  }
  if (!out.length) bad(headerAt + 1, 'the manifest lists no cable');
  return out;
}

// `scenario=SERIAL` of a simulated box: the scenario and the serial its simulated EEPROM reports.
export function simCableOf(entry: string): { scenario: string; serial?: string } {
  const [scenario, serial] = entry.split('=', 2) as [string, string | undefined];
  return serial ? { scenario, serial } : { scenario };
}
