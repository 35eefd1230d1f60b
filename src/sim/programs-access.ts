// `test -r|-x|-d|-e <path>` against a simulated node's installed files, and `ssh` from one simulated node to the
// other the way mpirun reaches its second rank (non-interactive, BatchMode).
import type { LabCore } from './lab-core.js';
import { pathKind } from './node-files.js';
import { err, ok, type Answer } from './programs-host.js';

// POSIX test with one unary file operator: exit 0 or 1, no output (exit 2 and dash's message for anything else).
export function testAnswer(core: LabCore, node: string, argv: string[]): Answer {
  const [, op, path] = argv;
  if (argv.length !== 3 || !op || !path || !['-r', '-x', '-d', '-e', '-f'].includes(op)) return err('sh: 1: test: only a unary file test is simulated\n', 2);
  const kind = pathKind(core, node, path);
  const yes =
    op === '-e' || op === '-r' ? kind !== null : op === '-d' ? kind === 'd' : op === '-x' ? kind === 'x' || kind === 'd' : kind === 'f' || kind === 'x';
  return { stdout: '', stderr: '', exitCode: yes ? 0 : 1 };
}

// ssh [-o Key=Value]... <host> <command>: reaches the node that owns the address, as the user's key and the
// known_hosts file there allow (scenario node `sshFromPeer`). Only `true` is run on the far side.
export function sshAnswer(core: LabCore, node: string, argv: string[]): Answer {
  const opts: Record<string, string> = {};
  let i = 1;
  for (; i < argv.length && argv[i]!.startsWith('-'); i++) {
    if (argv[i] === '-o' && argv[i + 1]) {
      const [k, ...v] = argv[++i]!.split('=');
      opts[k!.toLowerCase()] = v.join('=');
    }
  }
  const host = argv[i];
  const remote = argv.slice(i + 1);
  if (!host) return err('usage: ssh [-46AaCfGgKkMNnqsTtVvXxYy] [-B bind_interface] destination [command [argument ...]]\n', 255);
  const owner = core.ownerOf(host);
  if (!owner) return err(`ssh: connect to host ${host} port 22: No route to host\n`, 255);
  if (core.unreachable(owner.node) || core.model.rebooting(owner.node, core.now()))
    return err(`ssh: connect to host ${host} port 22: Connection refused\n`, 255);
  const batch = opts['batchmode'] === 'yes';
  const how = core.nodeSpec(owner.node).sshFromPeer ?? 'ok';
  if (how === 'unknown-host-key') {
    if (batch) return err('Host key verification failed.\n', 255);
    return err(`The authenticity of host '${host} (${host})' can't be established.\nHost key verification failed.\n`, 255);
  }
  if (how === 'needs-password') return err(`${core.nodeSpec(owner.node).user ?? 'nvidia'}@${host}: Permission denied (publickey,password).\n`, 255);
  if (remote.length === 0 || (remote.length === 1 && remote[0] === 'true')) return ok('');
  return err(`bash: line 1: ${remote[0]}: command not simulated over ssh\n`, 127);
}
