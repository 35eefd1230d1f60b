// A batch's throughput (issue 25 item 3), measured from its swap cycles (BatchState.cycles, on the batch's clock):
// cables qualified (given a PASS, MARGINAL or FAIL) per hour over the time the batch worked, projected per pair and
// day, and the mean swap, reboot, settle and qualification times of the cycles with a real swap (the steady state: a
// batch's first cables are in from the start), with the day those give per pair.
import type { BatchState, CycleRecord } from './state.js';

export interface Throughput {
  pairs: number;
  qualified: number; // cables a qualification judged
  setupChecks: number; // cables a set-up check judged (they qualify none)
  unit: 'qualified' | 'set-up check'; // what perHour and the cycle count
  hours: number; // from the first cable asked for to the last run's end
  perHour: number;
  perPairPerDay: number;
  // The mean cycle with a swap (null when no cycle swapped a cable): seconds asked -> in, in -> settled (reboot
  // included), settled -> qualified, and the cables per pair per day such cycles give.
  cycle: { cycles: number; cables: number; swapS: number; rebootS: number | null; settleS: number; runS: number; perPairPerDay: number } | null;
}

const DAY_S = 86_400;
const secondsBetween = (a: string, b: string) => (Date.parse(b) - Date.parse(a)) / 1000;
const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;

// What a batch's cycles measured, or null before any cycle ended.
export function throughputOf(s: BatchState): Throughput | null {
  const done = (s.cycles ?? []).filter((c): c is CycleRecord & { inAt: string; settledAt: string; endedAt: string } => !!(c.inAt && c.settledAt && c.endedAt));
  if (!done.length) return null;
  const qualified = done.reduce((a, c) => a + c.qualified, 0);
  const setupChecks = done.reduce((a, c) => a + (c.setupChecks ?? 0), 0);
  // The pace is of what the batch judged: qualified cables, or when it qualified none, its set-up checks (labelled so).
  const unit: Throughput['unit'] = qualified === 0 && setupChecks > 0 ? 'set-up check' : 'qualified';
  const counted = (c: CycleRecord) => (unit === 'qualified' ? c.qualified : (c.setupChecks ?? 0));
  const from = Math.min(...done.map((c) => Date.parse(c.askedAt)));
  const to = Math.max(...done.map((c) => Date.parse(c.endedAt)));
  const hours = (to - from) / 3_600_000;
  const pairs = s.pairs.length;
  const total = unit === 'qualified' ? qualified : setupChecks;
  const perHour = hours > 0 ? total / hours : 0;
  const steady = done.filter((c) => c.swapped && counted(c) > 0);
  let cycle: Throughput['cycle'] = null;
  if (steady.length) {
    const swapS = mean(steady.map((c) => secondsBetween(c.askedAt, c.inAt)));
    const settleS = mean(steady.map((c) => secondsBetween(c.inAt, c.settledAt)));
    const runS = mean(steady.map((c) => secondsBetween(c.settledAt, c.endedAt)));
    const reboots = steady.map((c) => c.rebootS).filter((r): r is number => r !== null);
    const cables = mean(steady.map(counted));
    cycle = {
      cycles: steady.length,
      cables,
      swapS,
      rebootS: reboots.length ? mean(reboots) : null,
      settleS,
      runS,
      perPairPerDay: (cables * DAY_S) / (swapS + settleS + runS),
    };
  }
  return { pairs, qualified, setupChecks, unit, hours, perHour, perPairPerDay: (perHour * 24) / pairs, cycle };
}

const min = (s: number) => `${(s / 60).toFixed(1)} min`;

// The lines a batch prints at its end (and batch.html shows).
export function throughputLines(t: Throughput): string[] {
  const out = [
    t.unit === 'qualified'
      ? `throughput: ${t.qualified} cable(s) qualified${t.setupChecks ? ` (${t.setupChecks} set-up check(s) apart)` : ''} in ${t.hours.toFixed(2)} h on ${t.pairs} pair(s): ${t.perHour.toFixed(2)} per hour, ${t.perPairPerDay.toFixed(1)} per pair per day`
      : `throughput: 0 cable(s) qualified; ${t.setupChecks} set-up check(s) (they qualify no cable) in ${t.hours.toFixed(2)} h on ${t.pairs} pair(s): ${t.perHour.toFixed(2)} set-up checks per hour, ${t.perPairPerDay.toFixed(1)} per pair per day`,
  ];
  const c = t.cycle;
  if (c)
    out.push(
      `  a swap cycle of ${c.cables.toFixed(c.cables % 1 ? 1 : 0)} cable(s) (mean of ${c.cycles}): swap ${min(c.swapS)}, reboot ${c.rebootS === null ? 'none' : min(c.rebootS)}, settle ${min(c.settleS)} (reboot included), ${t.unit === 'qualified' ? 'qualification' : 'set-up check'} ${min(c.runS)}: ${c.perPairPerDay.toFixed(1)} cables per pair per day`,
    );
  return out;
}
