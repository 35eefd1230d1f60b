import { ParseError } from '../domain/errors.js';

const KIND = 'nvidia-smi';

// A query value: numbers as numbers (units dropped), text as text, unavailable ([N/A], [Not Supported]) as null.
export type NvidiaSmiValue = string | number | null;

// One object per GPU keyed by query field name (units stripped from the header, e.g. `power.draw`).
export interface NvidiaSmiResult {
  fields: string[];
  units: Record<string, string | null>; // from the header brackets, null without header or unit
  gpus: Array<Record<string, NvidiaSmiValue>>;
}

// Fields whose values can look numeric but are identifiers (serials, versions, ids).
const STRING_FIELDS = new Set([
  'name',
  'gpu_name',
  'serial',
  'gpu_serial',
  'uuid',
  'gpu_uuid',
  'driver_version',
  'vbios_version',
  'pci.bus_id',
  'gpu_bus_id',
  'pci.device_id',
  'pci.sub_device_id',
  'inforom.img',
  'inforom.oem',
  'inforom.ecc',
  'inforom.pwr',
]);
const UNAVAILABLE = new Set(['[N/A]', '[Not Supported]', 'N/A']);
const HEADER_CELL = /^([a-z][a-z0-9_.]*)(?: \[([^\]]+)\])?$/;
const NUMBER = /^(-?\d+(?:\.\d+)?)(?: [A-Za-z%]+(?:\/s)?)?$/;

function splitCsv(line: string): string[] {
  return line.split(',').map((c) => c.trim());
}

function convert(field: string, cell: string, line: number): NvidiaSmiValue {
  if (UNAVAILABLE.has(cell)) return null;
  if (cell.startsWith('[')) throw new ParseError(KIND, line, `nvidia-smi reported ${cell.slice(0, 40)} for ${field}`);
  if (cell === '') throw new ParseError(KIND, line, `empty value for ${field}`);
  if (STRING_FIELDS.has(field)) return cell;
  const m = NUMBER.exec(cell);
  return m ? Number(m[1]) : cell;
}

// Parse `nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`; pass `fields` for noheader output
// (else field0..fieldN). The default table is refused: it has no stable columns.
export function parseNvidiaSmi(text: string, fields?: string[]): NvidiaSmiResult {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const content: Array<{ n: number; text: string }> = [];
  for (let i = 0; i < lines.length; i++) {
    const t = lines[i]!.trim();
    if (t === '') continue;
    if (t.startsWith('+---') || t.startsWith('| NVIDIA-SMI') || t.startsWith('|===')) {
      throw new ParseError(KIND, i + 1, 'this is the default nvidia-smi table; use --query-gpu=... --format=csv');
    }
    if (/^(NVIDIA-SMI has failed|No devices were found|Field ".*" is not a valid field)/.test(t)) {
      throw new ParseError(KIND, i + 1, t.slice(0, 120));
    }
    content.push({ n: i + 1, text: t });
  }
  const first = content[0];
  if (!first) throw new ParseError(KIND, 1, 'no output');

  const firstCells = splitCsv(first.text);
  const headerCells = firstCells.map((c) => HEADER_CELL.exec(c));
  const headerNames = headerCells.map((m) => (m ? m[1]! : null));
  const isHeader = fields ? headerNames.length === fields.length && headerNames.every((h, k) => h === fields[k]) : headerCells.every((m) => m !== null);

  if (fields && !isHeader && headerCells.every((m) => m !== null)) {
    throw new ParseError(KIND, first.n, `header "${first.text.slice(0, 80)}" does not match the requested fields`);
  }
  let names: string[];
  const units: Record<string, string | null> = {};
  if (isHeader) {
    names = headerNames as string[];
    headerCells.forEach((m, k) => (units[names[k]!] = m?.[2] ?? null));
  } else {
    names = fields ? [...fields] : firstCells.map((_, k) => `field${k}`);
    for (const f of names) units[f] = null;
  }
  if (new Set(names).size !== names.length) throw new ParseError(KIND, first.n, 'a field name appears twice');
  if (fields && fields.length === 0) throw new ParseError(KIND, first.n, 'empty field list');

  const gpus = content.slice(isHeader ? 1 : 0).map(({ n, text: t }) => {
    const cells = splitCsv(t);
    if (cells.length !== names.length) {
      throw new ParseError(KIND, n, `${cells.length} values for ${names.length} fields (${names.join(', ').slice(0, 80)})`);
    }
    const gpu: Record<string, NvidiaSmiValue> = {};
    names.forEach((f, k) => (gpu[f] = convert(f, cells[k]!, n)));
    return gpu;
  });
  if (gpus.length === 0) throw new ParseError(KIND, first.n, 'header without any GPU row');
  return { fields: names, units, gpus };
}
