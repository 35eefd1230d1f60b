// The one way to the limit of a rule: a loaded protocol holds one limit per rule of the rules it was read for, every
// setting filled in (src/protocol/validate.ts), so the run, the watch and the grading all read the same figure.
import { UsageError } from '../domain/errors.js';
import type { Limit } from '../domain/limit.js';
import type { Protocol } from './types.js';

// The limit for a rule id; every rule is guaranteed present by validation.
export function limitOf(protocol: Pick<Protocol, 'limits'>, rule: string): Limit {
  const l = protocol.limits.find((x) => x.rule === rule);
  if (!l) throw new UsageError(`protocol ${'name' in protocol ? String(protocol.name) : ''}: no limit "${rule}"`);
  return l;
}
