import { ParseError } from '../../domain/errors.js';
import { parseEepromHex } from '../../probes/eeprom-hex.js';
import { cmd } from '../../transport/commands.js';
import type { RunContext } from '../context.js';
import { SetupError, setupReason } from '../run-errors.js';

// Read and decode the EEPROM at both ends from raw bytes; two serials mean two different cables (ERROR).
export async function identity(ctx: RunContext): Promise<void> {
  await Promise.all(
    ctx.nodes.map(async (n) => {
      const netdev = n.cage!.rails[0].netdev;
      const lower = await ctx.runLogged(n, cmd.eepromLower(netdev), `eeprom-lower:${netdev}`, 30_000);
      const upper = await ctx.runLogged(n, cmd.eepromUpper(netdev), `eeprom-upper:${netdev}`, 30_000);
      if (lower.exitCode !== 0 || upper.exitCode !== 0) {
        const err = (lower.exitCode !== 0 ? lower : upper).stderr.trim() || 'no output';
        ctx.ends.push({ node: n.spec.name, netdev, identity: null, error: `EEPROM read failed: ${err}` });
        return;
      }
      try {
        const decoded = parseEepromHex(`${lower.stdout}\n${upper.stdout}`);
        ctx.ends.push({ node: n.spec.name, netdev, identity: decoded, checksums: decoded.checksums });
      } catch (e) {
        if (!(e instanceof ParseError)) throw e;
        ctx.ends.push({ node: n.spec.name, netdev, identity: null, error: `EEPROM unreadable: ${e.message}` });
      }
    }),
  );
  const bad = ctx.ends.filter((e) => !e.identity);
  if (bad.length) {
    throw new SetupError(
      setupReason('identity-read', bad.map((b) => `${b.node}: ${b.error}`).join('; '), {
        advice: 'reseat the cable; if the read keeps failing, update the kernel (mlx5 module EEPROM read fix) and retry',
      }),
    );
  }
  const serials = ctx.ends.map((e) => e.identity!.vendorSn);
  if (new Set(serials).size > 1) {
    throw new SetupError(
      setupReason(
        'identity-mismatch',
        `the two ends report different serials (${ctx.ends.map((e) => `${e.node}: ${e.identity!.vendorSn}`).join(', ')}): two different cables`,
        {
          advice: 'connect both nodes with ONE cable, in the cages given with --nodes/--port',
        },
      ),
    );
  }
}
