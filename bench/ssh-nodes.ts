// Two benchmark "nodes" on loopback: each a real OpenSSH sshd (own keys, config and temp dir, random port) in its
// own mount namespace, with GENERATED stand-ins for ethtool, nvidia-smi and /sys/class/hwmon whose outputs are
// rendered by the simulated lab (mlx5 size), and a user start-up (rc files) costing what a typical user's does.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { dirname, join } from 'node:path';
import { createLab } from '../src/sim/lab.js';
import { VirtualClock } from '../src/sim/virtual-clock.js';
import { cmd } from '../src/transport/commands.js';
import { SshRunner } from '../src/transport/ssh-runner.js';
import { descendants, prepareSshdDir, waitListening } from '../test/helpers/sshd.js';

export const SSHD = '/usr/sbin/sshd';
// The cabled cage's two netdevs, as the simulated lab names them.
export const RAILS = ['enp1s0f1np1', 'enP2p1s0f1np1'];

// One node: where it listens and how to reach it with SshRunner.
export interface BenchNode {
  name: string;
  standIns: StandInKind;
  dir: string;
  port: number;
  pid: number;
  runner(): SshRunner;
  stop(): Promise<void>;
}

// What the nodes' fake tools print, taken once from a simulated lab node (good-qsfp56, link up, idle).
export interface ToolOutputs {
  stats: Record<string, string>;
  link: Record<string, string>;
  fec: Record<string, string>;
  nvidiaSmi: string;
  hwmon: string; // `path:value` lines of the simulated node's hwmon files
}

// Render the outputs with the simulator (GENERATED, not recorded).
export async function simulatedToolOutputs(node: 'spark-a' | 'spark-b'): Promise<ToolOutputs> {
  const lab = createLab({ scenario: 'good-qsfp56', clock: new VirtualClock(1_700_000_000_000) });
  const r = lab.runner(node);
  const out = async (c: string) => {
    const res = await r.run(c);
    if (res.exitCode !== 0) throw new Error(`simulated ${node}: \`${c}\` exited ${res.exitCode}`);
    return res.stdout;
  };
  const o: ToolOutputs = { stats: {}, link: {}, fec: {}, nvidiaSmi: await out(cmd.nvidiaSmi()), hwmon: await out(cmd.hwmon()) };
  for (const rail of RAILS) {
    o.stats[rail] = await out(cmd.ethtoolStats(rail));
    o.link[rail] = await out(cmd.ethtoolLink(rail));
    o.fec[rail] = await out(cmd.ethtoolFec(rail));
  }
  await Promise.all(lab.nodes.map((n) => lab.runner(n).close()));
  return o;
}

// The user start-up chosen for the bench: bash, a ~/.bashrc with no interactive guard (as in rcs where tool inits
// were appended at the top) that sources four files: PATH, 20 aliases, `eval "$(dircolors -b)"`, and a tool init
// with three command substitutions (uname, hostname, tput). Login shells reach it through ~/.bash_profile.
const RC_FILES: Record<string, string> = {
  '.bash_profile': '# GENERATED bench rc\n[ -f ~/.bashrc ] && . ~/.bashrc\n',
  '.bashrc': '# GENERATED bench rc (no interactive guard)\nfor f in ~/.bashrc.d/*.sh; do . "$f"; done\nexport CQ_BENCH_RC=1\n',
  '.bashrc.d/10-path.sh': 'export PATH="@BIN@:$HOME/.local/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"\nexport EDITOR=vi LANG=C.UTF-8\n',
  '.bashrc.d/20-aliases.sh': Array.from({ length: 20 }, (_, i) => `alias a${i}='ls -la --color=auto dir${i}'`).join('\n') + '\n',
  '.bashrc.d/30-colors.sh': 'eval "$(dircolors -b)"\n',
  '.bashrc.d/40-tools.sh': 'export CQ_ARCH="$(uname -m)"\nexport CQ_HOST="$(hostname)"\nexport CQ_COLORS="$(tput -T xterm colors 2>/dev/null)"\n',
};

// The fake tools print the simulated outputs. Real ethtool and nvidia-smi are one exec of a C program each; a
// `#!/bin/sh` + `cat` stand-in costs two execs and a shell start, which on a machine where fork+exec is slow would
// be charged to the sampler. So when a C compiler is present the stand-ins are one small C program (below,
// compiled at bench start, dispatching on its name and arguments); otherwise the shell scripts, and the report says which.
export type StandInKind = 'c' | 'sh';

function fakeEthtool(dataDir: string): string {
  return `#!/bin/sh
# GENERATED bench stand-in for ethtool: prints outputs rendered by the simulated lab (not recorded output)
d='${dataDir}'
case "$1" in
  -S) exec cat "$d/stats-$2.txt" ;;
  -I) exec cat "$d/fec-$3.txt" ;;
  *) exec cat "$d/link-$1.txt" ;;
esac
`;
}

function fakeNvidiaSmi(dataDir: string): string {
  return `#!/bin/sh
# GENERATED bench stand-in for nvidia-smi --query-gpu (simulated lab output, not recorded)
exec cat '${dataDir}/nvidia-smi.txt'
`;
}

// The same two stand-ins as one C program: argv[0] ethtool (-S X | -I --show-fec X | X) or nvidia-smi.
const STAND_IN_C = `/* GENERATED bench stand-in for ethtool and nvidia-smi: prints outputs rendered by the simulated lab. */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
int main(int argc, char **argv) {
  char path[4096];
  const char *self = strrchr(argv[0], '/') ? strrchr(argv[0], '/') + 1 : argv[0];
  if (!strcmp(self, "nvidia-smi")) snprintf(path, sizeof path, "%s/nvidia-smi.txt", DATA_DIR);
  else if (argc >= 3 && !strcmp(argv[1], "-S")) snprintf(path, sizeof path, "%s/stats-%s.txt", DATA_DIR, argv[2]);
  else if (argc >= 4 && !strcmp(argv[1], "-I")) snprintf(path, sizeof path, "%s/fec-%s.txt", DATA_DIR, argv[3]);
  else if (argc >= 2) snprintf(path, sizeof path, "%s/link-%s.txt", DATA_DIR, argv[1]);
  else return 1;
  int fd = open(path, O_RDONLY);
  if (fd < 0) { perror(path); return 1; }
  char buf[65536];
  ssize_t n;
  while ((n = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t o = 0; o < n;) { ssize_t w = write(1, buf + o, (size_t)(n - o)); if (w <= 0) return 1; o += w; }
  return 0;
}
`;

// Install the stand-ins into bin: the C program when asked for and `cc` builds it, else the shell scripts.
function installStandIns(bin: string, data: string, want: StandInKind): StandInKind {
  if (want === 'c') {
    const src = join(bin, 'stand-in.c');
    writeFileSync(src, STAND_IN_C);
    try {
      execFileSync('cc', ['-O2', `-DDATA_DIR="${data}"`, '-o', join(bin, 'ethtool'), src], { stdio: 'ignore' });
      execFileSync('ln', ['-sf', 'ethtool', join(bin, 'nvidia-smi')]);
      return 'c';
    } catch {
      // no compiler: the shell scripts below
    }
  }
  write(join(bin, 'ethtool'), fakeEthtool(data), 0o755);
  write(join(bin, 'nvidia-smi'), fakeNvidiaSmi(data), 0o755);
  return 'sh';
}

function write(path: string, text: string, mode = 0o644): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, text);
  chmodSync(path, mode);
}

// Start one node: temp dir with keys, home (rc files), fake bin, and a hwmon tree bind-mounted over /sys/class
// inside a private mount namespace (so only this sshd and its sessions see it).
export async function startBenchNode(name: string, tools: ToolOutputs, want: StandInKind = 'c'): Promise<BenchNode> {
  const dir = mkdtempSync(join(tmpdir(), `cq-bench-${name}-`));
  const home = join(dir, 'home');
  const bin = join(dir, 'bin');
  const data = join(dir, 'data');
  for (const [rel, text] of Object.entries(RC_FILES)) write(join(home, rel), text.replace('@BIN@', bin));
  for (const rail of RAILS) {
    write(join(data, `stats-${rail}.txt`), tools.stats[rail]!);
    write(join(data, `link-${rail}.txt`), tools.link[rail]!);
    write(join(data, `fec-${rail}.txt`), tools.fec[rail]!);
  }
  write(join(data, 'nvidia-smi.txt'), tools.nvidiaSmi);
  mkdirSync(bin, { recursive: true });
  const standIns = installStandIns(bin, data, want);
  const sysClass = join(dir, 'sys-class');
  for (const line of tools.hwmon.split('\n')) {
    const m = /^\/sys\/class\/(hwmon\/hwmon\d+\/\w+):(.*)$/.exec(line);
    if (m) write(join(sysClass, m[1]!), `${m[2]!}\n`);
  }
  const { port, baseConfig } = await prepareSshdDir(dir, 'cablequal-bench');
  const config = [
    ...baseConfig,
    'PrintMotd no',
    'PrintLastLog no',
    'LogLevel ERROR',
    'MaxSessions 100',
    'MaxStartups 100:30:200',
    // Sessions get the bench home (its rc files), never the machine user's own.
    `SetEnv HOME=${home}`,
  ];
  writeFileSync(join(dir, 'sshd_config'), `${config.join('\n')}\n`);
  const script = `mount --bind '${sysClass}' /sys/class && exec ${SSHD} -D -e -f '${join(dir, 'sshd_config')}'`;
  const child = spawn('unshare', ['-m', '--propagation', 'private', 'sh', '-c', script], { stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err += d.toString()));
  await waitListening(port, child, () => err, { label: 'bench sshd', attempts: 300 });
  const kh = join(dir, 'known_hosts');
  const hostKey = readFileSync(join(dir, 'host_ed25519.pub'), 'utf8').trim().split(' ').slice(0, 2).join(' ');
  writeFileSync(kh, `[127.0.0.1]:${port} ${hostKey}\n`);
  const pid = child.pid!;
  return {
    name,
    standIns,
    dir,
    port,
    pid,
    runner: () =>
      new SshRunner({
        node: name,
        host: '127.0.0.1',
        port,
        user: userInfo().username,
        homeDir: dir,
        configPath: null,
        knownHostsPath: kh,
        agentSock: null,
        identityFiles: [join(dir, 'client_ed25519')],
        reconnect: { enabled: false },
      }),
    async stop() {
      for (const p of descendants(pid)) {
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        await exited;
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

// Start-up cost of the chosen rc and of this machine's own ~/.bashrc (for the report): wall ms of `bash -c true`.
export function rcStartupMs(home: string, reps = 10): number[] {
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t0 = performance.now();
    execFileSync('bash', ['-c', '. ~/.bashrc; true'], { env: { HOME: home, PATH: '/usr/bin:/bin' }, stdio: 'ignore' });
    times.push(performance.now() - t0);
  }
  return times;
}
