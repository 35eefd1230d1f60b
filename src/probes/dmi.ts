// What machine a node is, from its DMI/SMBIOS strings in sysfs (world-readable, no root): vendor, product, BIOS.
// The simulated lab answers these files too, and says there that it is simulated, so that no artifact of a run
// against simulated nodes (sim serve over real SSH included) can look like a real cable's by accident.
import { ParseError } from '../domain/errors.js';
import type { NodeDmi } from '../domain/record.js';
import type { DMI_FIELDS } from '../transport/commands.js';
import { clip } from './read.js';

type DmiField = (typeof DMI_FIELDS)[number];

// The sys_vendor a simulated node reports: the one value that marks every run against it as simulated.
export const SIMULATED_SYS_VENDOR = 'cablequal simulated lab';

// The bios_version a simulated node reports: its clock (real time sped up N times, or virtual time), so that a
// controller's --speed can be checked against it.
export function simulatedBiosVersion(speed: number | null): string {
  return speed === null ? 'simulated, virtual time' : `simulated, speed x${speed}`;
}

// The speed-up a simulated node says it runs at (`cablequal sim serve --speed N`); null for real nodes or virtual time.
export function simulatedSpeed(facts: Pick<DmiFacts, 'simulated' | 'biosVersion'>): number | null {
  const m = facts.simulated ? /^simulated, speed x(\d+(?:\.\d+)?)$/.exec(facts.biosVersion ?? '') : null;
  return m ? Number(m[1]) : null;
}

export interface DmiFacts extends NodeDmi {
  // True when the node says it is the simulated lab (sys_vendor).
  simulated: boolean;
}

const KEY: Record<DmiField, keyof NodeDmi> = {
  sys_vendor: 'sysVendor',
  product_name: 'productName',
  product_version: 'productVersion',
  board_name: 'boardName',
  bios_vendor: 'biosVendor',
  bios_version: 'biosVersion',
  bios_date: 'biosDate',
};
const LINE = /^\/sys\/class\/dmi\/id\/([a-z_]+):(.*)$/;

// Parse `grep -H . /sys/class/dmi/id/<field>...`: one `<path>:<value>` line per readable, non-empty attribute.
// Values are untrusted text: control characters are dropped and each value is capped at 128 characters.
export function parseDmi(text: string): DmiFacts {
  const facts: DmiFacts = {
    sysVendor: null,
    productName: null,
    productVersion: null,
    boardName: null,
    biosVendor: null,
    biosVersion: null,
    biosDate: null,
    simulated: false,
  };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const m = LINE.exec(line);
    if (!m) throw new ParseError('dmi', i + 1, `not a "/sys/class/dmi/id/<attr>:<value>" line: ${clip(line)}`);
    const field = m[1] as DmiField;
    if (!(field in KEY)) continue; // an attribute this reader does not ask for
    const value = m[2]!
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .trim()
      .slice(0, 128);
    facts[KEY[field]] = value === '' ? null : value;
  }
  facts.simulated = facts.sysVendor === SIMULATED_SYS_VENDOR;
  return facts;
}
