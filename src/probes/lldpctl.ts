// `lldpctl -f json0` (lldpd src/client/json_writer.c, json0: every value an array of objects; samples/lldpctl/):
// the neighbour heard on each local interface: its chassis id and system name, and its port id (a switch's port name).
import { ParseError } from '../domain/errors.js';

const KIND = 'lldpctl';

export interface LldpNeighbour {
  iface: string;
  chassisId: string | null;
  system: string | null;
  port: string | null;
}

// A value as sent by the neighbour (untrusted): control characters dropped, at most 64 characters kept.
const screen = (s: string) => s.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, 64);

type Values = { value?: unknown; type?: unknown }[] | undefined;
const first = (v: Values): string | null => {
  const x = Array.isArray(v) ? v[0]?.value : undefined;
  return typeof x === 'string' && x !== '' ? screen(x) : null;
};

export function parseLldpJson0(text: string): LldpNeighbour[] {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new ParseError(KIND, 1, `not JSON: ${(e as Error).message.slice(0, 80)}`);
  }
  const lldp = (raw as { lldp?: unknown })?.lldp;
  if (!Array.isArray(lldp)) throw new ParseError(KIND, 1, 'no "lldp" array: not `lldpctl -f json0` output');
  const out: LldpNeighbour[] = [];
  for (const block of lldp as { interface?: unknown }[]) {
    const ifaces = Array.isArray(block?.interface) ? (block.interface as Record<string, unknown>[]) : [];
    for (const i of ifaces) {
      if (typeof i['name'] !== 'string') throw new ParseError(KIND, 1, 'an interface without a name');
      const chassis = Array.isArray(i['chassis']) ? (i['chassis'] as Record<string, Values>[])[0] : undefined;
      const port = Array.isArray(i['port']) ? (i['port'] as Record<string, Values>[])[0] : undefined;
      out.push({ iface: screen(i['name']), chassisId: first(chassis?.['id']), system: first(chassis?.['name']), port: first(port?.['id']) });
    }
  }
  return out;
}
