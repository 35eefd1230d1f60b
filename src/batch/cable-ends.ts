import { ParseError } from '../domain/errors.js';
import { cagesFromLinks, parseIbdev2netdev, pickCage } from '../probes/ibdev2netdev.js';
import { parseNetIdentity } from '../probes/net-identity.js';
import { readCableSerial, readModuleEeprom } from '../probes/eeprom-hex.js';
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

// Look at one node's cage without trusting the operator: ibdev2netdev and sysfs for the rails, ethtool -m for the
// serial, read on both rails (one cable in one cage: the same serial on both functions).
export async function probeEnd(runner: CommandRunner, cage: number | 'auto'): Promise<EndView> {
  const none = (note: string): EndView => ({ up: false, serial: null, partNumber: null, note });
  try {
    const r = await runner.run(cmd.ibdev2netdev(), { timeoutMs: 30_000 });
    if (r.exitCode !== 0) return none(`ibdev2netdev failed: ${r.stderr.trim().split('\n')[0] ?? ''}`);
    const ids = await runner.run(cmd.netIdentity(), { timeoutMs: 30_000 });
    const picked = pickCage(cagesFromLinks(parseIbdev2netdev(r.stdout).links, parseNetIdentity(ids.stdout)), cage);
    if ('problem' in picked) return none(picked.problem);
    const c = picked.cage;
    let id;
    try {
      id = await readModuleEeprom(runner, c.rails[0].netdev);
    } catch (e) {
      if (!(e instanceof RemoteCommandError || e instanceof ParseError)) throw e;
      return { ...none('no cable EEPROM readable'), up: c.up };
    }
    const other = await readCableSerial((command) => runner.run(command, { timeoutMs: 30_000 }), c.rails[1].netdev);
    if (other !== null && other !== id.vendorSn)
      return { ...none(`cage ${c.index}: ${c.rails[0].netdev} reads serial ${id.vendorSn}, ${c.rails[1].netdev} reads ${other}`), up: c.up };
    return { up: c.up, serial: id.vendorSn || null, partNumber: id.vendorPn || null, note: c.up ? null : `cage ${c.index}: link not up on both rails` };
  } catch (e) {
    if (e instanceof TransportError) return { ...none(e.message), unreachable: true };
    if (e instanceof ParseError) return none(e.message);
    throw e;
  }
}

// Both ends: the same readable serial at each end and both links up means one cable, ready to test.
export function pairReady(ends: EndView[]): { serial: string; partNumber: string | null } | null {
  const s = ends[0]?.serial;
  if (!s || !ends.every((e) => e.up && e.serial === s)) return null;
  return { serial: s, partNumber: ends[0]!.partNumber };
}
