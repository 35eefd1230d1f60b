import { ParseError } from '../domain/errors.js';
import { cagesFromLinks, parseIbdev2netdev } from '../probes/ibdev2netdev.js';
import { readModuleEeprom } from '../probes/eeprom-hex.js';
import { cmd } from '../transport/commands.js';
import { RemoteCommandError, TransportError, type CommandRunner } from '../transport/types.js';

// What one end of the bench shows now: link (both rails of the cage Up) and the EEPROM serial, if readable.
export interface EndView {
  up: boolean;
  serial: string | null;
  partNumber: string | null;
  note: string | null; // why not ready, for the operator
  unreachable?: boolean; // the node did not answer at all (SSH down, host off)
}

// Look at one node's cage without trusting the operator: ibdev2netdev for the rails, ethtool -m for the serial.
export async function probeEnd(runner: CommandRunner, cage: number | 'auto'): Promise<EndView> {
  try {
    const r = await runner.run(cmd.ibdev2netdev(), { timeoutMs: 30_000 });
    const cages = r.exitCode === 0 ? cagesFromLinks(parseIbdev2netdev(r.stdout).links) : [];
    const picked = cage === 'auto' ? (cages.find((c) => c.up) ?? null) : (cages.find((c) => c.index === cage) ?? null);
    const candidates = picked ? [picked] : cage === 'auto' ? cages : [];
    for (const c of candidates) {
      try {
        const id = await readModuleEeprom(runner, c.rails[0].netdev);
        return { up: c.up, serial: id.vendorSn || null, partNumber: id.vendorPn || null, note: c.up ? null : `cage ${c.index}: link not up on both rails` };
      } catch (e) {
        if (!(e instanceof RemoteCommandError || e instanceof ParseError)) throw e;
      }
    }
    return { up: picked?.up ?? false, serial: null, partNumber: null, note: 'no cable EEPROM readable' };
  } catch (e) {
    if (e instanceof TransportError) return { up: false, serial: null, partNumber: null, note: e.message, unreachable: true };
    if (e instanceof ParseError) return { up: false, serial: null, partNumber: null, note: e.message };
    throw e;
  }
}

// Both ends: the same readable serial at each end and both links up means one cable, ready to test.
export function pairReady(ends: EndView[]): { serial: string; partNumber: string | null } | null {
  const s = ends[0]?.serial;
  if (!s || !ends.every((e) => e.up && e.serial === s)) return null;
  return { serial: s, partNumber: ends[0]!.partNumber };
}
