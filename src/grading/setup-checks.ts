// Conditions that make the run ERROR: the setup could not judge the cable, so they carry no grade.
import type { Limit } from '../domain/limit.js';
import type { Reason } from '../domain/outcome.js';
import type { BenchmarkRecord } from '../domain/record.js';
import { formatLimit, gradeValue } from '../rules/in-range.js';
import { formatNumber } from '../domain/number-format.js';

// A throttled NIC (~13 Gb/s in loopback) looks like a bad cable; loopback below the floor means reboot, not replace.
export function checkLoopback(rows: BenchmarkRecord['loopback'], floor: Limit): Reason[] {
  return rows
    .filter((r) => gradeValue(floor, r.gbps) === 'FAIL')
    .map((r) => ({
      rule: floor.rule,
      node: r.node,
      rail: r.rail,
      value: r.gbps,
      unit: floor.unit,
      limit: formatLimit(floor),
      message: `${r.node} rail ${r.rail}: loopback ${formatNumber(r.gbps)} ${floor.unit} (${formatLimit(floor)}): the NIC is throttled, the cable was not tested`,
      advice: 'reboot both nodes with the cable attached (once it took two reboots, or 60 s unplugged), then run again',
    }));
}

// Whether loopback covered every rail the throughput was measured on, on every node it ran on. Journals written
// before per-rail loopback (every row rail 0) checked rail 0 only: they keep grading as they did.
export function loopbackCoversRails(rows: BenchmarkRecord['loopback'], rails: readonly number[]): boolean {
  if (rows.length === 0) return false;
  if (rows.every((r) => r.rail === 0)) return true;
  const nodes = new Set(rows.map((r) => r.node));
  return [...nodes].every((n) => rails.every((rail) => rows.some((r) => r.node === n && r.rail === rail)));
}
