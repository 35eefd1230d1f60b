// A small test double: a CommandRunner whose shell answers the sampler's batch scripts with text the test
// GENERATES (not recorded output), in the virtual time of a VirtualClock.
import type { Clock } from '../../src/domain/clock.js';
import { formatTickScriptOutput, parseTickScript, type ScriptItem } from '../../src/transport/tick-script.js';
import { cmd, matchEthtoolStatsPhy } from '../../src/transport/commands.js';
import { TransportError, type CommandResult, type CommandRunner, type RemoteProcess, type RunOptions, type ShellSession } from '../../src/transport/types.js';

export interface FakeAnswer {
  stdout: string;
  exitCode: number;
}

export interface FakeNodeOptions {
  node: string;
  clock: Clock;
  // This node's clock minus the controller's.
  offsetMs?: number;
  // Virtual time before the node reads its clock, and after, per round trip (call = 0, 1, ... on this runner).
  latency?: (call: number) => { beforeMs: number; afterMs: number };
  // The answer to one batch item; undefined = the item is left out of the answer (as if cut off).
  answer: (item: ScriptItem, call: number) => FakeAnswer | undefined;
  // Throw a TransportError on this round trip (a dropped session).
  dropOn?: (call: number) => boolean;
  // Virtual time the n-th openShell() takes (n = 0, 1, ...): a node that is reconnecting.
  openDelayMs?: (n: number) => number;
}

// Node time as cmd.nodeTime() prints it in bash ($EPOCHREALTIME), from the virtual clock plus the node's offset.
export const nodeTimeText = (ms: number) => `${(Math.round(ms * 1000) / 1e6).toFixed(6)}\n`;

export class FakeRunner implements CommandRunner {
  readonly node: string;
  readonly simulated = true;
  calls = 0; // round trips, shell or run()
  opened = 0; // shells opened
  closedShells = 0; // shells closed by their user (not counting ones that died)
  scripts: string[] = [];

  constructor(private readonly o: FakeNodeOptions) {
    this.node = o.node;
  }

  runs = 0; // fresh-channel commands (run())

  // A fresh channel per command (the naive strategy the benchmark compares against).
  async run(command: string): Promise<CommandResult> {
    this.runs++;
    return this.answerScript(command);
  }

  async start(): Promise<RemoteProcess> {
    throw new Error('FakeRunner.start is not used here');
  }

  async openShell(): Promise<ShellSession> {
    const delay = this.o.openDelayMs?.(this.opened) ?? 0;
    this.opened++;
    if (delay > 0) await this.o.clock.sleep(delay);
    let closed = false;
    return {
      run: async (script: string, _opts?: RunOptions): Promise<CommandResult> => {
        if (closed) throw new TransportError(this.node, 'shell closed');
        this.scripts.push(script);
        try {
          return await this.answerScript(script);
        } catch (e) {
          closed = true;
          throw e;
        }
      },
      close: async () => {
        if (!closed) this.closedShells++;
        closed = true;
      },
    };
  }

  async close(): Promise<void> {}

  // One round trip: a batch script or a single command, answered in virtual time.
  private async answerScript(script: string): Promise<CommandResult> {
    const call = this.calls++;
    const lat = this.o.latency?.(call) ?? { beforeMs: 0, afterMs: 0 };
    const t0 = this.o.clock.now();
    if (lat.beforeMs > 0) await this.o.clock.sleep(lat.beforeMs);
    if (this.o.dropOn?.(call)) throw new TransportError(this.node, 'connection lost');
    const nodeMs = this.o.clock.now() + (this.o.offsetMs ?? 0);
    const batch = parseTickScript(script);
    const items = batch ?? [{ id: 'single', command: script }];
    const outputs = items.flatMap((it) => {
      if (it.command === cmd.nodeTime()) return [{ id: it.id, stdout: nodeTimeText(nodeMs), exitCode: 0 }];
      const a = this.o.answer(batch ? it : { id: idOf(script), command: script }, call);
      return a ? [{ id: it.id, ...a }] : [];
    });
    if (lat.afterMs > 0) await this.o.clock.sleep(lat.afterMs);
    const one = outputs[0];
    return {
      command: script,
      stdout: batch ? formatTickScriptOutput(outputs) : (one?.stdout ?? ''),
      stderr: '',
      exitCode: batch ? 0 : (one?.exitCode ?? 127),
      signal: null,
      durationMs: this.o.clock.now() - t0,
    };
  }
}

// The batch item id the sampler gives a single command, so one answer function serves both strategies.
function idOf(command: string): string {
  const phy = matchEthtoolStatsPhy(command);
  if (phy !== null) return `stats:${phy}`;
  const m = /^ethtool (-S |-I --show-fec )?(\S+)(?: \| grep .*)?$/.exec(command);
  if (m) return `${m[1] === '-S ' ? 'stats' : m[1] ? 'fec' : 'link'}:${m[2]}`;
  return command.startsWith('nvidia-smi') ? 'gpu' : command.startsWith('grep -H') ? 'hwmon' : command;
}
