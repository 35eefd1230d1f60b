// A real OpenSSH sshd for transport tests: own config, host key, authorized_keys and pid file in a temp dir,
// listening on a random loopback port. Never touches the machine's own SSH setup (except creating the
// privilege-separation directory /run/sshd that sshd insists on, if it is missing).
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { SshRunner, type SshRunnerOptions } from '../../src/transport/ssh-runner.js';

export const SSHD = '/usr/sbin/sshd';
export const sshdAvailable = existsSync(SSHD);
if (!sshdAvailable) {
  console.warn(`\n!!! ${SSHD} is not installed: OpenSSH transport tests are SKIPPED (apt-get install -y openssh-server) !!!\n`);
}

export interface Sshd {
  dir: string;
  port: number;
  user: string;
  // Client private key path (authorized on this sshd) and the host's public key line.
  clientKey: string;
  hostPublicKey: string;
  // known_hosts line for this server (`[127.0.0.1]:<port> ssh-ed25519 ...`).
  knownHostsLine: string;
  // Kill every per-connection sshd process (drops all sessions; the listener keeps accepting).
  dropSessions(): void;
  stop(): Promise<void>;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

function childrenOf(pid: number): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid === pid) out.push(Number(d));
    } catch {
      // process ended while we looked
    }
  }
  return out;
}

// Every process below pid (sshd's sessions and their shells), from /proc.
export function descendants(pid: number): number[] {
  const kids = childrenOf(pid);
  return kids.flatMap((k) => [k, ...descendants(k)]);
}

// Until something accepts on 127.0.0.1:port, or the child that should listen there exits (its stderr in the error).
export async function waitListening(port: number, child: ChildProcess, stderr: () => string, o: { label?: string; attempts?: number } = {}): Promise<void> {
  const label = o.label ?? 'sshd';
  for (let i = 0; i < (o.attempts ?? 200); i++) {
    if (child.exitCode !== null) throw new Error(`${label} exited with ${child.exitCode}: ${stderr()}`);
    const ok = await new Promise<boolean>((resolve) => {
      const s = connect(port, '127.0.0.1');
      s.once('connect', () => {
        s.destroy();
        resolve(true);
      });
      s.once('error', () => resolve(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${label} did not listen on ${port}: ${stderr()}`);
}

// Start sshd; `extraConfig` lines are appended to its sshd_config.
// A private sshd's directory: host and client ed25519 keys, authorized_keys, a free loopback port, and the config
// lines every private sshd of the tests and the bench shares (its own keys and files only; no password, no PAM).
export async function prepareSshdDir(dir: string, comment: string): Promise<{ port: number; baseConfig: string[] }> {
  const keygen = (file: string) => execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', comment, '-f', file]);
  keygen(join(dir, 'host_ed25519'));
  keygen(join(dir, 'client_ed25519'));
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(join(dir, 'client_ed25519.pub')), { mode: 0o600 });
  if (!existsSync('/run/sshd')) mkdirSync('/run/sshd', { mode: 0o755 });
  const port = await freePort();
  const baseConfig = [
    `Port ${port}`,
    'ListenAddress 127.0.0.1',
    `HostKey ${join(dir, 'host_ed25519')}`,
    `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`,
    'StrictModes no',
    'UsePAM no',
    'PasswordAuthentication no',
    'KbdInteractiveAuthentication no',
    'PubkeyAuthentication yes',
    'PermitRootLogin prohibit-password',
  ];
  return { port, baseConfig };
}

export async function startSshd(extraConfig: string[] = []): Promise<Sshd> {
  const dir = mkdtempSync(join(tmpdir(), 'cq-sshd-'));
  const { port, baseConfig } = await prepareSshdDir(dir, 'cablequal-test');
  const callerEnv = extraConfig.filter((l) => l.startsWith('SetEnv ')).flatMap((l) => l.slice('SetEnv '.length).trim().split(/\s+/));
  const config = [
    ...baseConfig,
    'AllowTcpForwarding yes',
    'PrintMotd no',
    'LogLevel ERROR',
    'MaxStartups 100', // a loaded CI box may have many handshakes in flight; never drop them at random
    // Sessions get an empty HOME of their own unless the caller sets one: the machine user's shell rc is not under
    // test, and on this image root's .bashrc runs a pyenv init (~1 s a session, and stderr noise when its rehash lock
    // is stale). PYENV_REHASH_TIMEOUT bounds that wait for a caller who points HOME at such an rc.
    // sshd takes the first SetEnv line only, and the first value of a name: a caller's SetEnv values come first.
    ['SetEnv', ...callerEnv, ...(callerEnv.some((e) => e.startsWith('HOME=')) ? [] : [`HOME=${join(dir, 'home')}`]), 'PYENV_REHASH_TIMEOUT=1'].join(' '),
    ...extraConfig.filter((l) => !l.startsWith('SetEnv ')),
  ];
  mkdirSync(join(dir, 'home'));
  writeFileSync(join(dir, 'sshd_config'), `${config.join('\n')}\n`);
  const child = spawn(SSHD, ['-D', '-e', '-f', join(dir, 'sshd_config')], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  await waitListening(port, child, () => err);
  const hostPublicKey = readFileSync(join(dir, 'host_ed25519.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
  const dropSessions = () => {
    if (!child.pid) return;
    for (const pid of descendants(child.pid)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  return {
    dir,
    port,
    user: userInfo().username,
    clientKey: join(dir, 'client_ed25519'),
    hostPublicKey,
    knownHostsLine: `[127.0.0.1]:${port} ${hostPublicKey}`,
    dropSessions,
    async stop() {
      dropSessions();
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// An SshRunner to this sshd as its key's user, trusting its host key (known_hosts in its dir), no config file and
// no agent; `o` adds to or overrides that (keepalives, reconnect, node name...).
export function sshdRunner(sshd: Sshd, o: Partial<SshRunnerOptions> = {}): SshRunner {
  const knownHostsPath = join(sshd.dir, 'known_hosts');
  if (!existsSync(knownHostsPath)) writeFileSync(knownHostsPath, `${sshd.knownHostsLine}\n`);
  return new SshRunner({
    node: 'test-node',
    host: '127.0.0.1',
    port: sshd.port,
    user: sshd.user,
    configPath: null,
    knownHostsPath,
    agentSock: null,
    identityFiles: [sshd.clientKey],
    ...o,
  });
}
