import { createInterface } from 'node:readline';

export type OperatorAnswer = 'continue' | 'skip' | 'quit';

// The person swapping cables (injected: tests script it; the CLI reads stdin lines).
export interface Operator {
  say(line: string): void;
  // Attended mode: Enter = continue, `s` = skip this cable, `q` = stop.
  ask(prompt: string): Promise<OperatorAnswer>;
  // `q` typed while a cable runs: stop after this cable.
  stopRequested(): boolean;
}

export function answerOf(line: string): OperatorAnswer | null {
  const t = line.trim().toLowerCase();
  if (t === '') return 'continue';
  if (t === 's' || t === 'skip') return 'skip';
  if (t === 'q' || t === 'quit') return 'quit';
  return null;
}

// Reads answers line by line from a stream (stdin); a `q` line between prompts asks to stop after the running cable.
export function streamOperator(input: NodeJS.ReadableStream, write: (s: string) => void): Operator & { close(): void } {
  const rl = createInterface({ input });
  const queue: string[] = [];
  let waiting: ((l: string) => void) | null = null;
  let stop = false;
  let ended = false;
  rl.on('line', (l) => {
    if (waiting) {
      const w = waiting;
      waiting = null;
      w(l);
    } else if (answerOf(l) === 'quit') stop = true;
    else queue.push(l);
  });
  rl.on('close', () => {
    ended = true;
    if (waiting) waiting('q');
  });
  const next = () => new Promise<string>((resolve) => (queue.length ? resolve(queue.shift()!) : ended ? resolve('q') : (waiting = resolve)));
  return {
    say: (line) => write(`${line}\n`),
    async ask(prompt) {
      for (;;) {
        write(`${prompt} [Enter = continue, s = skip, q = stop] `);
        const a = answerOf(await next());
        if (a) return a;
        write('answer with Enter, s or q\n');
      }
    },
    stopRequested: () => stop,
    close: () => rl.close(),
  };
}

// Unattended (--auto-detect): nobody answers; messages still go to the log stream.
export function silentOperator(write: (s: string) => void): Operator {
  return { say: (l) => write(`${l}\n`), ask: async () => 'continue', stopRequested: () => false };
}
