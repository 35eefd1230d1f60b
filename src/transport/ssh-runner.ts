// CommandRunner over SSH (ssh2), behaving like the OpenSSH client the lab already uses: ~/.ssh/config, agent or
// identity files, known_hosts checking, keepalives, TCP_NODELAY, ProxyJump. A dropped connection is re-established
// with exponential backoff and the outage is reported as a gap; commands during the outage wait a bounded time and
// then fail with TransportError (a harness ERROR, never a cable verdict).
import { randomBytes } from 'node:crypto';
import { appendFileSync, existsSync, mkdirSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { homedir, userInfo } from 'node:os';
import { dirname } from 'node:path';
import type { Duplex } from 'node:stream';
import ssh2 from 'ssh2';
const { Client } = ssh2; // ssh2 is CommonJS: named ESM imports fail under plain node
type Client = InstanceType<typeof Client>;
import type { ClientChannel, ConnectConfig } from 'ssh2';
import { createHash } from 'node:crypto';
import { systemClock, within, type Clock } from '../domain/clock.js';
import { ParseError, UsageError } from '../domain/errors.js';
import { readInputText } from '../io/read-input.js';
import { checkHostKey, keyTypeOf, knownHostLine, knownKeyTypes, mismatchMessage } from './known-hosts.js';
import { startWrapped } from './remote-process.js';
import { authMethods, planAuth } from './ssh-auth.js';
import type { ResolvedHost, SshConfig } from './ssh-config.js';
import { loadSshConfig } from './ssh-config-files.js';
import { parseJumpHop, resolveHost } from './ssh-config.js';
import type { CommandResult, CommandRunner, RemoteProcess, RunOptions, ShellSession, StartOptions } from './types.js';
import { CommandAbortedError, TransportError } from './types.js';
import { commandText, printable } from '../domain/text.js';
import { buildShellFrame, takeShellFrame } from './shell-frame.js';

// An outage of the connection to a node, from the drop to the moment commands could run again.
export interface Gap {
  node: string;
  fromMs: number;
  toMs: number;
  reason: string;
}

export interface SshRunnerOptions {
  // The alias as written in ~/.ssh/config (or a plain host name).
  node: string;
  host?: string;
  port?: number;
  user?: string;
  homeDir?: string;
  // null: read no config file.
  configPath?: string | null;
  knownHostsPath?: string;
  localUser?: string;
  // Agent socket; defaults to $SSH_AUTH_SOCK; null disables the agent.
  agentSock?: string | null;
  identityFiles?: string[];
  // Like StrictHostKeyChecking=accept-new: unknown hosts are trusted on first use and appended to known_hosts.
  acceptNewHostKeys?: boolean;
  keepaliveIntervalMs?: number;
  keepaliveCountMax?: number;
  connectTimeoutMs?: number;
  // Opens the TCP connection (default: net.connect with TCP_NODELAY); injectable so a host that never answers a SYN
  // can be tested on a network that answers everything.
  openSocket?: (host: string, port: number) => Duplex;
  reconnect?: { enabled?: boolean; initialDelayMs?: number; maxDelayMs?: number; maxWaitMs?: number };
  onGap?: (gap: Gap) => void;
  // Status polling of processes started with start().
  pollMs?: number;
  clock?: Clock;
}

const HOSTKEY_ALGOS: Record<string, string[]> = {
  'ssh-ed25519': ['ssh-ed25519'],
  'ecdsa-sha2-nistp256': ['ecdsa-sha2-nistp256'],
  'ecdsa-sha2-nistp384': ['ecdsa-sha2-nistp384'],
  'ecdsa-sha2-nistp521': ['ecdsa-sha2-nistp521'],
  'ssh-rsa': ['rsa-sha2-512', 'rsa-sha2-256', 'ssh-rsa'],
};

// SHA256 fingerprint as OpenSSH prints it.
export function fingerprint(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

// ---- Persistent shell framing (shared with the SSH server, which recognises the same line) ----

// The persistent shell: a non-interactive session like every other command's (so its exported PATH is the same),
// replaced at once by bash without rc files, or sh. The user's login shell and its rc (set -e, functions named
// like our tools, fish) never run the sampler's scripts, and that first shell never reads stdin, so no frame is
// lost to it. bash is preferred for $EPOCHREALTIME (node time without a fork).
export const SAMPLING_SHELL = 'command -v bash >/dev/null 2>&1 && exec bash --noprofile --norc || exec sh';

// Send a signal request on an exec channel (RFC 4254 6.9). ssh2's ch.signal() does nothing once stdin is closed
// (it checks `writable`), and run() closes stdin at once so that a command reading it ends: the request is sent
// through the channel's protocol directly, as ch.signal() would. OpenSSH >= 7.9 delivers it to the command.
export function signalChannel(ch: ClientChannel, name: string): void {
  const c = ch as unknown as { outgoing?: { id: number; state: string }; _client?: { _protocol?: { signal(id: number, name: string): void } } };
  try {
    // 'eof': our side sent EOF (stdin closed); the channel is still open for requests until it is closed.
    if ((c.outgoing?.state === 'open' || c.outgoing?.state === 'eof') && c._client?._protocol) c._client._protocol.signal(c.outgoing.id, name);
    else ch.signal(name);
  } catch {
    // the channel or the connection is already gone: nothing left to signal
  }
}

interface Target {
  host: string;
  port: number;
  user: string;
  identityFiles: string[];
}

// OpenSSH's sshd refuses channels beyond MaxSessions (10 by default) on one connection ("Channel open failure"): a
// run has a load's status polls, stops and reads, and the sampler's shell open at once, so keep below it and let a
// further open wait for a channel to close.
export const MAX_CHANNELS = 6;
const CHANNEL_OPEN_ATTEMPTS = 10;

interface ChannelSlots {
  acquire(): Promise<void>;
  release(): void;
}

const slotsByClient = new WeakMap<Client, ChannelSlots>();

function channelSlots(c: Client): ChannelSlots {
  let slots = slotsByClient.get(c);
  if (slots) return slots;
  let open = 0;
  const waiting: (() => void)[] = [];
  slots = {
    acquire: () => {
      if (open < MAX_CHANNELS) {
        open++;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => waiting.push(resolve));
    },
    // A waiting open takes over the slot; else the slot is free.
    release: () => {
      const next = waiting.shift();
      if (next) next();
      else open = Math.max(0, open - 1);
    },
  };
  // A dropped connection frees everyone waiting: their open then fails on the dead client like any other.
  c.once('close', () => {
    for (const w of waiting.splice(0)) w();
  });
  slotsByClient.set(c, slots);
  return slots;
}

export class SshRunner implements CommandRunner {
  readonly node: string;
  readonly simulated = false;
  readonly resolved: ResolvedHost;
  private readonly config: SshConfig;
  private readonly o: SshRunnerOptions;
  private readonly clock: Clock;
  private readonly knownHostsPath: string;
  private client: Client | null = null;
  private jumps: Client[] = [];
  private connecting: Promise<Client> | null = null;
  private down: { fromMs: number; reason: string } | null = null;
  // Why the current connection is failing, as the operator should read it (for what the failure cuts short).
  private dropCause: string | null = null;
  private fatal: TransportError | null = null;
  private closed = false;
  private sessionId = randomBytes(4).toString('hex');
  private seq = 0;

  constructor(opts: SshRunnerOptions) {
    this.o = opts;
    this.node = opts.node;
    this.clock = opts.clock ?? systemClock;
    const home = opts.homeDir ?? homedir();
    const configPath = opts.configPath === undefined ? `${home}/.ssh/config` : opts.configPath;
    // A config cablequal cannot read is bad input: one line naming the file and line, not a stack trace.
    try {
      this.config = configPath && existsSync(configPath) ? loadSshConfig(configPath, home) : { blocks: [], ignored: [] };
      this.resolved = resolveHost(this.config, opts.node, {
        homeDir: home,
        localUser: opts.localUser ?? userInfo().username,
        ...(opts.user ? { user: opts.user } : {}),
      });
    } catch (e) {
      if (e instanceof ParseError) throw new UsageError(`${e.message} (ssh config for node ${opts.node}; fix it or pass --ssh-config)`);
      throw e;
    }
    this.knownHostsPath = opts.knownHostsPath ?? this.resolved.userKnownHostsFile ?? `${home}/.ssh/known_hosts`;
  }

  private target(): Target {
    return {
      host: this.o.host ?? this.resolved.hostName,
      port: this.o.port ?? this.resolved.port,
      user: this.o.user ?? this.resolved.user,
      identityFiles: this.o.identityFiles ?? this.resolved.identityFiles,
    };
  }

  private hopTarget(hop: string): Target {
    const h = parseJumpHop(hop);
    const r = resolveHost(this.config, h.host, {
      homeDir: this.o.homeDir ?? homedir(),
      localUser: this.o.localUser ?? userInfo().username,
      ...(h.user ? { user: h.user } : {}),
    });
    return { host: r.hostName, port: h.port ?? r.port, user: h.user ?? r.user, identityFiles: this.o.identityFiles ?? r.identityFiles };
  }

  // The known_hosts file's text ('' when there is none): a regular file below 16 MiB, or one line naming it (a FIFO
  // there is never waited on: io/read-input.ts).
  private knownHosts(): string {
    return existsSync(this.knownHostsPath) ? readInputText(this.knownHostsPath, 'knownHosts') : '';
  }

  // Connect one hop over `sock` (a TCP socket or a forwarded channel), verifying its host key.
  private connectHop(t: Target, sock: Duplex): Promise<Client> {
    return new Promise((resolve, reject) => {
      const c = new Client();
      let refusal: TransportError | null = null;
      let known: string;
      try {
        known = this.knownHosts();
      } catch (e) {
        return reject(new TransportError(this.node, (e as Error).message));
      }
      const prefer = knownKeyTypes(known, t.host, t.port).flatMap((k) => HOSTKEY_ALGOS[k] ?? []);
      const plan = planAuth({
        username: t.user,
        identityFiles: t.identityFiles,
        agentSock: this.o.agentSock === undefined ? (process.env.SSH_AUTH_SOCK ?? null) : this.o.agentSock,
      });
      const methods = authMethods(plan);
      const cfg: ConnectConfig = {
        sock: sock as ConnectConfig['sock'],
        username: t.user,
        readyTimeout: this.connectTimeoutMs(),
        keepaliveInterval: this.keepalive().intervalMs,
        keepaliveCountMax: this.keepalive().countMax,
        hostVerifier: (blob: Buffer) => {
          let text: string;
          try {
            text = this.knownHosts();
          } catch (e) {
            refusal = new TransportError(this.node, (e as Error).message);
            return false;
          }
          const v = checkHostKey(text, t.host, t.port, blob);
          const fp = fingerprint(blob);
          if (v.status === 'ok') return true;
          if (v.status === 'mismatch') {
            refusal = new TransportError(this.node, mismatchMessage(t.host, t.port, this.knownHostsPath, v.line, fp));
          } else if (v.status === 'revoked') {
            refusal = new TransportError(
              this.node,
              `host key ${fp} of ${t.host}:${t.port} is marked @revoked in ${this.knownHostsPath}:${v.line}; refusing to connect`,
            );
          } else if (this.o.acceptNewHostKeys || this.resolved.strictHostKeyChecking === 'accept-new') {
            mkdirSync(dirname(this.knownHostsPath), { recursive: true });
            const prefix = text === '' || text.endsWith('\n') ? '' : '\n';
            appendFileSync(this.knownHostsPath, `${prefix}${knownHostLine(t.host, t.port, blob)}\n`, { mode: 0o600 });
            return true;
          } else {
            const notes = [
              v.otherTypeLines.length ? `keys of other types are known at line(s) ${v.otherTypeLines.join(', ')}` : '',
              v.certAuthorityLines.length
                ? `@cert-authority line(s) ${v.certAuthorityLines.join(', ')} ignored: cablequal does not verify host certificates`
                : '',
            ].filter(Boolean);
            refusal = new TransportError(
              this.node,
              `host key verification failed: ${t.host}:${t.port} (${keyTypeOf(blob)} ${fp}) is not in ${this.knownHostsPath}${notes.length ? `; ${notes.join('; ')}` : ''}`,
              `connect once with \`ssh -p ${t.port} ${t.user}@${t.host}\` and check the fingerprint, or pass --accept-new-host-keys`,
            );
          }
          return false;
        },
        authHandler: methods.length ? [...methods] : undefined,
      };
      if (prefer.length) cfg.algorithms = { serverHostKey: { remove: prefer, prepend: prefer } as never };
      let ready = false;
      c.once('ready', () => {
        ready = true;
        c.setNoDelay(true);
        resolve(c);
      });
      // Closed before the handshake finished, without an error event: still a failed attempt.
      c.once('close', () => {
        if (!ready) reject(refusal ?? new TransportError(this.node, `cannot connect to ${t.host}:${t.port}: connection closed during the handshake`));
      });
      // `on`, not `once`: a host that accepts TCP but never speaks SSH (or speaks garbage) makes ssh2 emit several
      // errors (handshake timeout, then the lost connection); an unheard one would crash the process. The first
      // settles the promise, the rest are already told.
      c.on('error', (e: Error & { level?: string }) => {
        if (ready) return; // from now on adopt()'s handler reads them
        if (refusal) return reject(refusal);
        const authFail = e.level === 'client-authentication';
        reject(
          new TransportError(
            this.node,
            authFail
              ? `authentication as ${t.user}@${t.host}:${t.port} failed (tried ${plan.agent ? 'agent, ' : ''}${plan.keys.map((k) => k.path).join(', ') || 'no identity files'})${plan.notes.length ? `; ${plan.notes.join('; ')}` : ''}`
              : `cannot connect to ${t.host}:${t.port}: ${this.explainHandshake(e.message)}`,
            authFail ? `authorise the key on the node (ssh-copy-id) or load it into ssh-agent` : undefined,
            { cause: e },
          ),
        );
        c.end();
      });
      c.connect(cfg);
    });
  }

  // ServerAliveInterval (15 s when the config has none: a dead node is noticed) and ServerAliveCountMax.
  private keepalive(): { intervalMs: number; countMax: number } {
    return {
      intervalMs: this.o.keepaliveIntervalMs ?? (this.resolved.serverAliveIntervalS ? this.resolved.serverAliveIntervalS * 1000 : 15_000),
      countMax: this.o.keepaliveCountMax ?? this.resolved.serverAliveCountMax,
    };
  }

  // ssh2's words for a handshake that never happened, turned into what the operator can check.
  private explainHandshake(message: string): string {
    if (/timed out while waiting for handshake/i.test(message)) {
      return `no SSH handshake within ${this.connectTimeoutMs()} ms (ConnectTimeout): the host accepted the TCP connection but did not speak SSH; check the host and port`;
    }
    if (/protocol|ident|bad packet|invalid/i.test(message)) return `the host did not answer as an SSH server (${printable(message)}); check the host and port`;
    return printable(message);
  }

  // ssh2's words for a dead connection, turned into what the operator can check.
  private explainDrop(message: string): string {
    if (!/keepalive timeout/i.test(message)) return message;
    const k = this.keepalive();
    return `the node stopped answering: ${k.countMax} keepalives ${k.intervalMs} ms apart went unanswered (ServerAliveInterval, ServerAliveCountMax)`;
  }

  // ConnectTimeout bounds both the TCP connect and the SSH handshake, as in OpenSSH.
  private connectTimeoutMs(): number {
    return this.o.connectTimeoutMs ?? (this.resolved.connectTimeoutS ? this.resolved.connectTimeoutS * 1000 : 20_000);
  }

  // A TCP connection, or a TransportError once ConnectTimeout passes (a silent host would otherwise hold a reconnect
  // attempt until the kernel gives up on its SYNs, about two minutes).
  private tcp(host: string, port: number): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      const s = this.o.openSocket ? this.o.openSocket(host, port) : netConnect({ host, port }).setNoDelay(true);
      const ms = this.connectTimeoutMs();
      const timer = setTimeout(() => {
        s.destroy();
        reject(
          new TransportError(this.node, `cannot connect to ${host}:${port}: no answer within ${ms} ms (ConnectTimeout); check the host is up and reachable`),
        );
      }, ms);
      s.once('connect', () => {
        clearTimeout(timer);
        resolve(s);
      });
      // `on`: a second error before ssh2 takes the socket over must not go unheard.
      s.on('error', (e: Error) => {
        clearTimeout(timer);
        reject(new TransportError(this.node, `cannot connect to ${host}:${port}: ${e.message}`, undefined, { cause: e }));
      });
    });
  }

  private forward(via: Client, host: string, port: number): Promise<Duplex> {
    return new Promise((resolve, reject) => {
      via.forwardOut('127.0.0.1', 0, host, port, (err, ch) =>
        err ? reject(new TransportError(this.node, `ProxyJump could not reach ${host}:${port}: ${err.message}`)) : resolve(ch),
      );
    });
  }

  // Through each ProxyJump hop in order, then to the node.
  private async connectChain(): Promise<Client> {
    const jumps: Client[] = [];
    try {
      let via: Client | null = null;
      for (const hop of this.o.host ? [] : this.resolved.proxyJump) {
        const t = this.hopTarget(hop);
        const sock: Duplex = via ? await this.forward(via, t.host, t.port) : await this.tcp(t.host, t.port);
        via = await this.connectHop(t, sock);
        jumps.push(via);
      }
      const t = this.target();
      const sock: Duplex = via ? await this.forward(via, t.host, t.port) : await this.tcp(t.host, t.port);
      const c = await this.connectHop(t, sock);
      this.jumps = jumps;
      return c;
    } catch (e) {
      for (const j of jumps) j.end();
      throw e;
    }
  }

  private adopt(c: Client): void {
    this.client = c;
    this.dropCause = null;
    const onDrop = (reason: string) => {
      if (this.client !== c) return;
      this.client = null;
      for (const j of this.jumps) j.end();
      this.jumps = [];
      if (this.closed) return;
      this.down = { fromMs: this.clock.now(), reason };
      if (this.o.reconnect?.enabled === false) {
        this.fatal = new TransportError(this.node, `connection lost (${reason}); reconnection disabled`);
        return;
      }
      this.connecting = this.reconnectLoop();
      this.connecting.catch(() => undefined);
    };
    let lastError = 'connection closed';
    c.on('error', (e: Error) => {
      lastError = e.message;
      if (this.client === c) this.dropCause = this.explainDrop(e.message);
    });
    c.on('close', () => onDrop(lastError));
  }

  private async reconnectLoop(): Promise<Client> {
    let delay = this.o.reconnect?.initialDelayMs ?? 500;
    const max = this.o.reconnect?.maxDelayMs ?? 30_000;
    for (;;) {
      await this.clock.sleep(delay);
      if (this.closed) throw new TransportError(this.node, 'runner closed');
      try {
        const c = await this.connectChain();
        if (this.closed) {
          c.end();
          throw new TransportError(this.node, 'runner closed');
        }
        const gap = { node: this.node, fromMs: this.down!.fromMs, toMs: this.clock.now(), reason: this.down!.reason };
        this.down = null;
        this.connecting = null;
        this.adopt(c);
        this.o.onGap?.(gap);
        return c;
      } catch (e) {
        // A changed host key or refused credentials will not heal by retrying: stop and report it.
        if (this.closed) throw e;
        if (e instanceof TransportError && !/cannot connect|timed out|ProxyJump/i.test(e.message)) {
          this.fatal = e;
          this.connecting = null;
          throw e;
        }
        delay = Math.min(max, delay * 2);
      }
    }
  }

  // Connect now (also done lazily by the first command); throws TransportError with what to check.
  // What of the ssh config was not applied (Match criteria that are not evaluated, ...), one line each with its
  // file and line, so the operator learns why a setting seems ignored instead of guessing.
  get configNotes(): string[] {
    return this.config.ignored.map((i) => `${i.file ?? 'ssh config'}:${i.line}: ${i.key}: ${i.reason}`);
  }

  async connect(): Promise<void> {
    await this.getClient();
  }

  private async getClient(): Promise<Client> {
    if (this.closed) throw new TransportError(this.node, 'runner is closed');
    if (this.fatal) throw this.fatal;
    if (this.client) return this.client;
    if (this.down && this.connecting) {
      const waitMs = this.o.reconnect?.maxWaitMs ?? 60_000;
      return within(
        this.clock,
        waitMs,
        this.connecting,
        () =>
          new TransportError(
            this.node,
            `connection lost at ${new Date(this.down?.fromMs ?? 0).toISOString()} (${this.down?.reason}); not back after ${waitMs} ms`,
          ),
      );
    }
    if (!this.connecting) {
      this.connecting = this.connectChain().then(
        (c) => {
          this.connecting = null;
          this.adopt(c);
          return c;
        },
        (e: unknown) => {
          this.connecting = null;
          throw e;
        },
      );
    }
    return this.connecting;
  }

  // `onOpen` runs synchronously in ssh2's callback: a fast server's exit-status can arrive in the same read. At most
  // MAX_CHANNELS are open on one connection at a time; a further open waits until one closes.
  private async openChannel(kind: 'exec' | 'shell', command?: string, onOpen?: (ch: ClientChannel) => void): Promise<ClientChannel> {
    for (let attempt = 1; ; attempt++) {
      const c = await this.getClient();
      const slots = channelSlots(c);
      await slots.acquire();
      const r = await new Promise<ClientChannel | Error>((resolve) => {
        const cb = (err: Error | undefined, ch: ClientChannel) => {
          if (err) {
            slots.release();
            return resolve(err);
          }
          ch.once('close', () => slots.release());
          onOpen?.(ch);
          resolve(ch);
        };
        if (kind === 'exec') c.exec(command!, cb);
        else c.shell(false, cb);
      });
      if (!(r instanceof Error)) return r;
      // sshd may free a closed session a moment after the client saw it close: a refused open is tried again shortly.
      if (/Channel open failure/i.test(r.message) && attempt < CHANNEL_OPEN_ATTEMPTS && !this.closed) {
        await this.clock.sleep(50 * attempt);
        continue;
      }
      throw new TransportError(this.node, `cannot open ${kind} channel: ${r.message}${this.dropCause ? ` (${this.dropCause})` : ''}`, undefined, { cause: r });
    }
  }

  // One command on its own channel: stdout, stderr, exit code or signal; on timeout the channel is signalled and closed.
  async run(command: string, opts: RunOptions = {}): Promise<CommandResult> {
    const t0 = this.clock.now();
    let exitCode: number | null = null;
    let signal: string | null = null;
    let exited = false;
    const ch = await this.openChannel('exec', command, (c) =>
      c.on('exit', (code: number | null, sig?: string) => {
        exited = true;
        exitCode = typeof code === 'number' ? code : null;
        signal = sig ? (sig.startsWith('SIG') ? sig : `SIG${sig}`) : null;
      }),
    );
    return new Promise<CommandResult>((resolve, reject) => {
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      let timedOut = false;
      let aborted = false;
      const kill = () => {
        signalChannel(ch, 'KILL');
        ch.close();
      };
      // sshd may keep the channel open until the command dies: report the timeout now, without waiting.
      const timer = opts.timeoutMs
        ? setTimeout(() => {
            timedOut = true;
            kill();
            finish();
          }, opts.timeoutMs)
        : null;
      const onAbort = () => {
        aborted = true;
        kill();
      };
      opts.signal?.addEventListener('abort', onAbort, { once: true });
      if (opts.signal?.aborted) onAbort();
      ch.on('data', (d: Buffer) => out.push(d));
      ch.stderr.on('data', (d: Buffer) => err.push(d));
      let finished = false;
      const finish = () => {
        if (finished) return;
        finished = true;
        if (timer) clearTimeout(timer);
        opts.signal?.removeEventListener('abort', onAbort);
        const result: CommandResult = {
          command,
          stdout: Buffer.concat(out).toString('utf8'),
          stderr: Buffer.concat(err).toString('utf8'),
          exitCode,
          signal,
          durationMs: this.clock.now() - t0,
        };
        if (timedOut) return resolve({ ...result, timedOut: true });
        if (aborted) return reject(new CommandAbortedError(this.node, command));
        if (!exited)
          return reject(
            new TransportError(this.node, `connection dropped while running \`${commandText(command)}\`${this.dropCause ? ` (${this.dropCause})` : ''}`),
          );
        resolve(result);
      };
      ch.on('close', finish);
      if (opts.stdin !== undefined) ch.end(opts.stdin);
      else ch.end();
    });
  }

  // Wrapped in its own process group with pid/out/err/rc files in opts.runDir (see remote-process.ts).
  start(command: string, opts: StartOptions): Promise<RemoteProcess> {
    return startWrapped(this, command, { ...opts, pollMs: this.o.pollMs, clock: this.clock });
  }

  // A persistent shell: one round trip per command, stdout and stderr framed separately by unique markers.
  // Commands run in the shell itself (`{ cmd ; }`, stdin from /dev/null): `cd` and variables persist, `exit` ends
  // the shell (the call then fails with TransportError and the next call opens a new shell). One line per call.
  async openShell(): Promise<ShellSession> {
    let ch: ClientChannel | null = null;
    let out = '';
    let err = '';
    let notify: (() => void) | null = null;
    let ended: string | null = null;
    let chain: Promise<unknown> = Promise.resolve();
    const open = async () => {
      const c = await this.openChannel('exec', SAMPLING_SHELL);
      out = '';
      err = '';
      ended = null;
      c.on('data', (d: Buffer) => {
        out += d.toString('utf8');
        notify?.();
      });
      c.stderr.on('data', (d: Buffer) => {
        err += d.toString('utf8');
        notify?.();
      });
      c.on('close', () => {
        ended = 'shell channel closed';
        if (ch === c) ch = null;
        notify?.();
      });
      ch = c;
      return c;
    };
    const runOne = async (command: string, opts: RunOptions): Promise<CommandResult> => {
      if (command.includes('\n')) throw new UsageError('openShell().run takes one line; use run() for scripts');
      const c = ch ?? (await open());
      const marker = `@@cqsh-${this.sessionId}-${this.seq++}`;
      const t0 = this.clock.now();
      c.write(`${buildShellFrame(marker, command)}\n`);
      return new Promise<CommandResult>((resolve, reject) => {
        const timer = opts.timeoutMs
          ? setTimeout(() => {
              notify = null;
              c.close();
              if (ch === c) ch = null;
              const after = (text: string) => (text.includes(`${marker}-b\n`) ? text.slice(text.indexOf(`${marker}-b\n`) + marker.length + 3) : '');
              resolve({ command, stdout: after(out), stderr: after(err), exitCode: null, signal: null, durationMs: this.clock.now() - t0, timedOut: true });
            }, opts.timeoutMs)
          : null;
        notify = () => {
          const f = takeShellFrame(marker, out, err);
          if (f) {
            if (timer) clearTimeout(timer);
            notify = null;
            out = f.restOut;
            err = f.restErr;
            resolve({ command, stdout: f.stdout, stderr: f.stderr, exitCode: f.exitCode, signal: null, durationMs: this.clock.now() - t0 });
          } else if (ended) {
            if (timer) clearTimeout(timer);
            notify = null;
            reject(new TransportError(this.node, `${ended} while running \`${commandText(command)}\``));
          }
        };
        notify();
      });
    };
    return {
      run: (command, opts = {}) => {
        const p = chain.then(() => runOne(command, opts));
        chain = p.catch(() => undefined);
        return p;
      },
      close: async () => {
        (ch as ClientChannel | null)?.end('exit\n');
        (ch as ClientChannel | null)?.close();
        ch = null;
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
    const c = this.client;
    this.client = null;
    c?.end();
    for (const j of this.jumps) j.end();
    this.jumps = [];
  }
}
