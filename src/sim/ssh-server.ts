// Puts any CommandRunner behind a real SSH server (ssh2 Server), so the simulated lab is reached exactly like the
// real nodes: same SshRunner, same OpenSSH client, same host-key and key checks. exec requests run through the
// runner; a shell request is a line-oriented shell (one line = one runner.run, with SshRunner's framing understood);
// the remote-process wrappers of remote-process.ts are mapped onto the runner's native start()/stop().
// Limits: stdin sent on an exec channel is not passed to the runner; no port forwarding, sftp or pty semantics.
import { timingSafeEqual } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import ssh2 from 'ssh2';
const { Server, utils } = ssh2; // ssh2 is CommonJS: named ESM imports fail under plain node
import type { Connection, ParsedKey, ServerChannel } from 'ssh2';
import { UsageError } from '../domain/errors.js';
import {
  formatStartReply,
  formatStatusReply,
  formatStopReply,
  parseFindStale,
  parseReadOutput,
  parseStart,
  parseStatus,
  parseStop,
} from '../transport/remote-process.js';
import { SAMPLING_SHELL } from '../transport/ssh-runner.js';
import { formatShellFrame, parseShellFrame } from '../transport/shell-frame.js';
import { parseLockScript, type LockOwner } from '../transport/node-lock.js';
import type { CommandRunner, RemoteProcess } from '../transport/types.js';
import { TransportError } from '../transport/types.js';
import { generateEd25519 } from '../transport/ssh-keys.js';

export interface ServeOptions {
  runner: CommandRunner;
  // 0 picks a free port.
  port?: number;
  host?: string;
  // Private host key (OpenSSH or PEM text); an ed25519 key is generated when absent.
  hostKey?: string | Buffer;
  // authorized_keys text, or a list of public keys (one per entry, OpenSSH format).
  authorizedKeys: string | Array<string | Buffer>;
  // Only this user may log in (any user when absent).
  user?: string;
}

export interface ServedRunner {
  port: number;
  host: string;
  // Public host key line (`ssh-ed25519 AAAA...`), for a known_hosts entry.
  hostPublicKey: string;
  // Cut every open connection (fault injection: a dropped link to the node).
  dropConnections(): void;
  close(): Promise<void>;
}

interface Reply {
  stdout: string;
  stderr: string;
  exitCode: number | null;
  signal?: string | null;
}

interface Tracked {
  proc: RemoteProcess;
  runId: string;
  runDir: string;
  ended: { exitCode: number | null; signal: string | null } | null;
}

function parseAuthorized(keys: ServeOptions['authorizedKeys']): ParsedKey[] {
  const list =
    typeof keys === 'string'
      ? keys
          .split('\n')
          .map((l) => l.trim())
          .filter((l) => l && !l.startsWith('#'))
      : keys;
  return list.map((k, i) => {
    const p = utils.parseKey(k);
    if (p instanceof Error) throw new UsageError(`authorized key ${i + 1}: ${p.message}`);
    return Array.isArray(p) ? p[0]! : p;
  });
}

// Serve `runner` over SSH on host:port (127.0.0.1 and a free port by default).
export async function serveRunnerOverSsh(opts: ServeOptions): Promise<ServedRunner> {
  const allowed = parseAuthorized(opts.authorizedKeys);
  const hostKey = opts.hostKey ?? generateEd25519().private;
  const parsedHost = utils.parseKey(hostKey);
  if (parsedHost instanceof Error) throw new UsageError(`host key: ${parsedHost.message}`);
  const hostParsed = Array.isArray(parsedHost) ? parsedHost[0]! : parsedHost;
  const runner = opts.runner;
  const procs = new Map<string, Tracked>();
  const conns = new Set<Connection>();
  // The node lock of src/transport/node-lock.ts, kept in memory: owner fields and last heartbeat (ms).
  const locks = new Map<string, { owner: Partial<LockOwner>; beatMs: number }>();

  async function handle(command: string, signal?: AbortSignal, onOutput?: (chunk: { stdout: string; stderr: string }) => void): Promise<Reply> {
    const start = parseStart(command);
    if (start) {
      const proc = await runner.start(start.command, { runDir: start.runDir, name: start.name });
      const t: Tracked = { proc, runId: start.runId, runDir: start.runDir, ended: null };
      procs.set(`${start.runDir}/${start.name}`, t);
      proc.done.then(
        (r) => (t.ended = { exitCode: r.exitCode, signal: r.signal }),
        () => (t.ended = { exitCode: null, signal: null }),
      );
      return { stdout: formatStartReply(proc.pid), stderr: '', exitCode: 0 };
    }
    const status = parseStatus(command);
    if (status) {
      const t = procs.get(`${status.runDir}/${status.name}`);
      await new Promise((r) => setImmediate(r)); // let a just-settled `done` be seen
      const st = !t
        ? ({ state: 'missing' } as const)
        : !t.ended
          ? ({ state: 'running', pid: t.proc.pid } as const)
          : t.ended.exitCode !== null
            ? ({ state: 'exited', pid: t.proc.pid, exitCode: t.ended.exitCode } as const)
            : ({ state: 'gone', pid: t.proc.pid } as const);
      return { stdout: formatStatusReply(st), stderr: '', exitCode: 0 };
    }
    const stop = parseStop(command);
    if (stop) {
      const t = procs.get(`${stop.runDir}/${stop.name}`);
      if (!t) return { stdout: formatStopReply('missing', null), stderr: '', exitCode: 0 };
      if (t.ended) return { stdout: formatStopReply('not-running', t.proc.pid), stderr: '', exitCode: 0 };
      await t.proc.stop(stop.graceMs);
      return { stdout: formatStopReply('terminated', t.proc.pid), stderr: '', exitCode: 0 };
    }
    const read = parseReadOutput(command);
    if (read) {
      const t = procs.get(`${read.runDir}/${read.name}`);
      const o = t ? await t.proc.output() : { stdout: '', stderr: '' };
      return { ...o, exitCode: 0 };
    }
    const lock = parseLockScript(command);
    if (lock) {
      const held = locks.get(lock.root);
      if (lock.op === 'acquire' || lock.op === 'info') {
        if (!held) {
          if (lock.op === 'info') return { stdout: 'cq-lock free\n', stderr: '', exitCode: 0 };
          locks.set(lock.root, { owner: lock.owner, beatMs: Date.now() });
          return { stdout: 'cq-lock acquired\n', stderr: '', exitCode: 0 };
        }
        const o = held.owner;
        const live = [...procs.values()].filter((t) => !t.ended && t.runId === o.run).length;
        const fields = (['run', 'label', 'host', 'pid', 'started'] as const).map((k) => `${k}=${o[k] ?? ''}\n`).join('');
        return {
          stdout: `cq-lock held\n${fields}cq-lock-age ${Math.round((Date.now() - held.beatMs) / 1000)}\ncq-lock-live ${live}\n`,
          stderr: '',
          exitCode: 0,
        };
      }
      if (!held || held.owner.run !== lock.run)
        return { stdout: lock.op === 'release' ? 'cq-unlock not-owner\n' : 'cq-lock-beat lost\n', stderr: '', exitCode: 0 };
      if (lock.op === 'release') locks.delete(lock.root);
      else held.beatMs = Date.now();
      return { stdout: lock.op === 'release' ? 'cq-unlock released\n' : 'cq-lock-beat ok\n', stderr: '', exitCode: 0 };
    }
    const stale = parseFindStale(command);
    if (stale) {
      const lines = [...procs.values()]
        .filter((t) => !t.ended && t.runDir.startsWith(`${stale.root}/`))
        .map((t) => `cq-stale ${t.runId} ${t.proc.name} ${t.proc.pid ?? 0}\n`);
      return { stdout: lines.join(''), stderr: '', exitCode: 0 };
    }
    const r = await runner.run(command, { ...(signal ? { signal } : {}), ...(onOutput ? { onOutput } : {}) });
    return r;
  }

  function replyError(e: unknown): Reply {
    return { stdout: '', stderr: `cablequal sim: ${e instanceof Error ? e.message : String(e)}\n`, exitCode: 255 };
  }

  // The runner says the node is unreachable (a simulated ssh-drop): cut the connection like a dead link would,
  // and turn new connections away for a moment so the client's reconnect sees the outage too.
  let unreachableUntil = 0;
  function failOrDrop(conn: Connection) {
    return (e: unknown): Reply | null => {
      if (e instanceof TransportError) {
        unreachableUntil = Date.now() + 1000;
        conn.end();
        return null;
      }
      return replyError(e);
    };
  }

  function serveExec(conn: Connection, ch: ServerChannel, command: string, abort: AbortController): void {
    // Output a long-running command flushes is written as it comes (as sshd relays a real one); the rest at the end.
    const sent = { stdout: 0, stderr: 0, done: false };
    const onOutput = (c: { stdout: string; stderr: string }) => {
      if (sent.done) return;
      if (c.stdout) ch.write(c.stdout);
      if (c.stderr) ch.stderr.write(c.stderr);
      sent.stdout += c.stdout.length;
      sent.stderr += c.stderr.length;
    };
    handle(command, abort.signal, onOutput)
      .catch(failOrDrop(conn))
      .then((r) => {
        sent.done = true;
        if (!r) return;
        if (r.stdout.length > sent.stdout) ch.write(r.stdout.slice(sent.stdout));
        if (r.stderr.length > sent.stderr) ch.stderr.write(r.stderr.slice(sent.stderr));
        if (r.exitCode === null && r.signal) ch.exit(r.signal.replace(/^SIG/, ''), false, '');
        else ch.exit(r.exitCode ?? 255);
        ch.end();
      });
  }

  // Line-oriented shell: each line runs to completion before the next one is read.
  function serveShell(conn: Connection, ch: ServerChannel): void {
    let buf = '';
    let busy = Promise.resolve();
    ch.on('data', (d: Buffer) => {
      buf += d.toString('utf8');
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        busy = busy.then(() => runLine(line));
      }
    });
    const runLine = async (line: string): Promise<void> => {
      if (line.trim() === '') return;
      if (line.trim() === 'exit') {
        ch.exit(0);
        ch.end();
        return;
      }
      const frame = parseShellFrame(line);
      const r = await handle(frame ? frame.command : line).catch(failOrDrop(conn));
      if (!r) return;
      const o = frame ? formatShellFrame(frame.marker, r) : r;
      if (o.stdout) ch.write(o.stdout);
      if (o.stderr) ch.stderr.write(o.stderr);
    };
  }

  const server = new Server({ hostKeys: [hostKey] }, (client: Connection) => {
    if (Date.now() < unreachableUntil) {
      client.on('error', () => undefined);
      client.end();
      return;
    }
    conns.add(client);
    (client as unknown as { setNoDelay(v: boolean): void }).setNoDelay(true);
    client.on('close', () => conns.delete(client));
    client.on('error', () => undefined);
    client.on('authentication', (ctx) => {
      if (opts.user && ctx.username !== opts.user) return ctx.reject(['publickey']);
      if (ctx.method !== 'publickey') return ctx.reject(['publickey']);
      const key = allowed.find((k) => {
        const pub = k.getPublicSSH();
        return k.type === ctx.key.algo && pub.length === ctx.key.data.length && timingSafeEqual(pub, ctx.key.data);
      });
      if (!key) return ctx.reject(['publickey']);
      if (ctx.signature && ctx.blob) {
        return key.verify(ctx.blob, ctx.signature, ctx.hashAlgo) === true ? ctx.accept() : ctx.reject(['publickey']);
      }
      return ctx.accept(); // key query without signature: "this key would be accepted"
    });
    client.on('ready', () => {
      client.on('session', (acceptSession) => {
        const session = acceptSession();
        const abort = new AbortController();
        session.on('pty', (accept) => accept?.());
        session.on('env', (accept) => accept?.());
        session.on('signal', (accept) => {
          accept?.();
          abort.abort(new Error('signalled by client'));
        });
        // SshRunner closes stdin at once, and ssh2's server drops every channel request after the client's EOF, so
        // the KILL it sends on abort or timeout never arrives here (OpenSSH delivers it). The channel closed by the
        // client under a running command stands for that kill; after a command ended, the abort changes nothing.
        session.on('close', () => abort.abort(new Error('channel closed by client')));
        // SshRunner's persistent shell arrives as an exec of SAMPLING_SHELL: served as the line shell it becomes.
        session.on('exec', (accept, _reject, info) =>
          info.command === SAMPLING_SHELL ? serveShell(client, accept()) : serveExec(client, accept(), info.command, abort),
        );
        session.on('shell', (accept) => serveShell(client, accept()));
      });
    });
  });

  const host = opts.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    host,
    hostPublicKey: `${hostParsed.type} ${hostParsed.getPublicSSH().toString('base64')}`,
    dropConnections() {
      for (const c of conns) c.end();
      conns.clear();
    },
    async close() {
      for (const t of procs.values()) if (!t.ended) await t.proc.stop(0).catch(() => undefined);
      for (const c of conns) c.end();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
