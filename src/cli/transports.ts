import { existsSync } from 'node:fs';
import { UsageError } from '../domain/errors.js';
import type { NodeSpec } from '../domain/node.js';
import { LocalRunner } from '../transport/local-runner.js';
import { SshRunner } from '../transport/ssh-runner.js';
import type { CommandRunner } from '../transport/types.js';

// `localhost`/`local` means the controller is itself one of the nodes: run commands directly, no SSH.
const LOCAL = new Set(['local', 'localhost']);

// One transport per node: OpenSSH-like SSH (config, agent, known_hosts), or local for the controller's own node.
export async function makeRunners(
  nodes: NodeSpec[],
  opts: { acceptNewHostKeys: boolean; env: NodeJS.ProcessEnv; sshConfig?: string; warn?: (line: string) => void },
): Promise<Map<string, CommandRunner>> {
  // An ssh config named on the command line must be there (~/.ssh/config, the default, need not): a missing one was
  // ignored, and the nodes reached with no config at all.
  if (opts.sshConfig !== undefined && !existsSync(opts.sshConfig))
    throw new UsageError(`--ssh-config ${opts.sshConfig}: no such file; give the ssh config that names the nodes, or leave --ssh-config out (~/.ssh/config)`);
  const map = new Map<string, CommandRunner>();
  const noted = new Set<string>();
  for (const n of nodes) {
    if (LOCAL.has(n.host)) {
      map.set(n.name, new LocalRunner({ node: n.name }));
      continue;
    }
    const runner = new SshRunner({
      node: n.host,
      ...(n.user ? { user: n.user } : {}),
      ...(n.sshPort ? { port: n.sshPort } : {}),
      acceptNewHostKeys: opts.acceptNewHostKeys,
      ...(opts.sshConfig ? { configPath: opts.sshConfig } : {}),
      ...(opts.env.SSH_AUTH_SOCK ? { agentSock: opts.env.SSH_AUTH_SOCK } : { agentSock: null }),
    });
    // Said once per run, not once per node: both nodes usually read the same config.
    for (const note of runner.configNotes) {
      if (!noted.has(note)) opts.warn?.(`cablequal: ssh config not applied: ${note}`);
      noted.add(note);
    }
    map.set(n.name, runner);
  }
  return map;
}
