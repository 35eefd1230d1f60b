// Which nodes of a batch are the machine the batch itself runs on (a documented setup: the controller is one of the
// two Sparks). Rebooting such a node after a swap would kill the batch, so the batch never does: it reboots the other
// node and asks the operator to reboot this one, then to --resume. A node is the controller when it is reached through
// the local runner, or when it answers with the controller's own boot id (the same running kernel: `ssh localhost`,
// the node's own name or address). Machine ids are not compared: machines cloned from one DGX OS image can share one.
import type { NodeSpec } from '../domain/node.js';
import { LocalRunner } from '../transport/local-runner.js';
import { cmd } from '../transport/commands.js';
import { TransportError, type CommandRunner } from '../transport/types.js';

const BOOT_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

// The names of the nodes that are this machine; `controllerBootId` is this machine's boot id (null: unknown).
export async function controllerNodes(
  benches: readonly { nodes: readonly NodeSpec[]; runners: ReadonlyMap<string, CommandRunner> }[],
  controllerBootId: string | null,
): Promise<Set<string>> {
  const found = new Set<string>();
  const asked = new Set<string>();
  for (const b of benches) {
    for (const n of b.nodes) {
      if (asked.has(n.name)) continue;
      asked.add(n.name);
      const runner = b.runners.get(n.name);
      if (!runner) continue;
      if (runner instanceof LocalRunner) {
        found.add(n.name);
        continue;
      }
      if (controllerBootId === null || !BOOT_ID.test(controllerBootId)) continue;
      try {
        const r = await runner.run(cmd.bootId(), { timeoutMs: 30_000 });
        if (r.exitCode === 0 && r.stdout.trim() === controllerBootId) found.add(n.name);
      } catch (e) {
        // A node that does not answer now cannot be told apart; the batch's own waits report it.
        if (!(e instanceof TransportError)) throw e;
      }
    }
  }
  return found;
}
