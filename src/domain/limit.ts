import type { Grade } from './outcome.js';

// A limit with a marginal band (OpenHTF's InRange): values beyond `fail` FAIL, beyond `marginal` are MARGINAL.
// `direction` says which side is good: 'min' = value must stay at or above, 'max' = at or below.
export interface Limit {
  rule: string; // e.g. "fec-margin"
  direction: 'min' | 'max';
  fail: number;
  marginal?: number;
  unit: string; // e.g. "decades", "x", "Gb/s", "events"
  description?: string;
  // How the rule is measured, where it has settings (window length, floors), each filled with the rule's default
  // when the protocol leaves it out (src/rules/definitions.ts declares them).
  params?: Readonly<Record<string, number>>;
}

// A value checked against a limit.
export interface Measurement {
  rule: string;
  value: number;
  unit: string;
  grade: Grade;
  limitText: string;
  node?: string;
  phase?: string;
  lane?: number;
}
