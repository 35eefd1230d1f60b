import { quoteInput } from '../domain/text.js';
import { UsageError } from '../domain/errors.js';
import { ArgvError } from './failure.js';

// An option given twice (`--out a --out b`) is refused, naming it: taking either value silently would write
// somewhere the operator did not mean. Options declared as arrays (--pair, --sim-fault) may repeat.
export function refuseRepeated(argv: Record<string, unknown>, declared: { key: Record<string, unknown>; array: string[] }): void {
  for (const key of Object.keys(declared.key)) {
    const v = argv[key];
    if (Array.isArray(v) && !declared.array.includes(key)) {
      throw new ArgvError(`--${key} given ${v.length} times (${v.map((x) => quoteInput(x, 40)).join(', ')}): give it once`);
    }
  }
}

// Number options are declared `type: 'number'` (their help says [number]); yargs hands their coerce the number it
// read, NaN for text that is none (`--seed abc`): the message then says `got NaN` and the CLI puts the text typed in
// its place (usage-errors.ts), so that the person sees what they typed.
function numberOf(name: string, v: unknown): number {
  if (Array.isArray(v)) throw new ArgvError(`--${name} given ${v.length} times: give it once`);
  return typeof v === 'number' ? v : /^\s*-?\d+(\.\d+)?([eE][-+]?\d+)?\s*$/.test(String(v)) ? Number(v) : NaN;
}

// A whole number option within [min, max] (`--seed abc`, `--seed 1.5`, `--listen 99999` refused).
export function intArg(name: string, min: number, max: number): (v: unknown) => number | undefined {
  return (v) => {
    if (v === undefined) return undefined;
    const n = numberOf(name, v);
    if (!Number.isSafeInteger(n) || n < min || n > max) throw new ArgvError(`--${name}: expected a whole number from ${min} to ${max}, got ${n}`);
    return n;
  };
}

// The time speed-up of `run --speed` and `sim serve --speed`, the same bounds everywhere: below a tenth of real time
// nothing is sped up (a 75-minute procedure would take over 12 hours); above 1000 the nodes' own clocks cannot
// keep up. With --sim in process, at most `simMax` (the controller's own work runs at the lab's pace too).
export const SPEED = { min: 0.1, max: 1000, simMax: 100 } as const;

// --speed, within SPEED (`--speed 0`, `--speed 1e-300`, `--speed fast` refused).
export function speedArg(): (v: unknown) => number | undefined {
  return (v) => {
    if (v === undefined) return undefined;
    const n = numberOf('speed', v);
    if (!(n >= SPEED.min && n <= SPEED.max)) throw new ArgvError(`--speed: expected a speed-up factor from ${SPEED.min} to ${SPEED.max}, got ${n}`);
    return n;
  };
}

// A TCP port option renamed: its old spelling still works, said once, and both at once are refused.
export function renamedOption<T>(
  old: { name: string; value: T | undefined },
  now: { name: string; value: T | undefined },
  warn: (s: string) => void,
): T | undefined {
  if (old.value === undefined) return now.value;
  if (now.value !== undefined) throw new UsageError(`--${old.name} is the old name of --${now.name}: give --${now.name} only`);
  warn(`cablequal: warning: --${old.name} is deprecated here: use --${now.name} ${String(old.value)} (--port is the QSFP cage of run, batch and preflight)\n`);
  return old.value;
}
