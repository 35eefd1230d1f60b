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
