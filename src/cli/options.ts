import { speedProblem } from '../domain/speed.js';
import { quoteInput } from '../domain/text.js';
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

// A whole number option within [min, max] (`--seed abc`, `--port 99999` refused); parsed from the text typed.
export function intArg(name: string, min: number, max: number): (v: unknown) => number | undefined {
  return (v) => {
    if (v === undefined) return undefined;
    if (Array.isArray(v)) throw new ArgvError(`--${name} given ${v.length} times: give it once`);
    const s = String(v).trim();
    const n = /^-?\d+$/.test(s) ? Number(s) : NaN;
    if (!Number.isSafeInteger(n) || n < min || n > max)
      throw new ArgvError(`--${name}: expected a whole number from ${min} to ${max}, got ${quoteInput(s, 40)}`);
    return n;
  };
}

// `--speed N`: a number within the one speed bound (src/domain/speed.ts), parsed from the text typed.
export function speedArg(v: unknown): number | undefined {
  if (v === undefined) return undefined;
  if (Array.isArray(v)) throw new ArgvError(`--speed given ${v.length} times: give it once`);
  const s = String(v).trim();
  const n = /^\d+(\.\d+)?([eE][-+]?\d+)?$/.test(s) ? Number(s) : NaN;
  const problem = speedProblem(n);
  if (problem) throw new ArgvError(`--speed: ${problem}, got ${quoteInput(s, 40)}`);
  return n;
}
