// `ethtool -i <iface>`: the NIC's driver and firmware (ethtool's driver info: `key: value` lines).
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

const KIND = 'ethtool-driver';
const LINE = /^([a-z][a-z-]*):(?: (.*))?$/;

// What the harness keeps of `ethtool -i`; null where the line is absent or empty.
export interface EthtoolDriver {
  driver: string | null; // e.g. mlx5_core
  version: string | null; // driver version (the kernel release for in-tree drivers, else e.g. a DOCA/OFED version)
  firmwareVersion: string | null; // e.g. 28.45.4028 (MT_0000001221): firmware and PSID
  busInfo: string | null; // PCI address
}

// Parse the exact output of `ethtool -i <iface>`; values are untrusted (control characters dropped, 128 characters kept).
export function parseEthtoolDriver(text: string): EthtoolDriver {
  const out: EthtoolDriver = { driver: null, version: null, firmwareVersion: null, busInfo: null };
  const keys: Record<string, keyof EthtoolDriver> = { driver: 'driver', version: 'version', 'firmware-version': 'firmwareVersion', 'bus-info': 'busInfo' };
  const lines = text.split('\n');
  let any = false;
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const m = LINE.exec(line);
    if (!m) throw new ParseError(KIND, i + 1, `not an "ethtool -i" line ("<key>: <value>"): ${clip(line)}`);
    any = true;
    const key = keys[m[1]!];
    const value = (m[2] ?? '')
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .trim()
      .slice(0, 128);
    if (key) out[key] = value === '' ? null : value;
  }
  if (!any || out.driver === null) throw new ParseError(KIND, 1, 'no "driver:" line: not the output of ethtool -i');
  return out;
}
