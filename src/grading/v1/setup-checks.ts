// The loopback check version 1 graded throughput behind (copied from src/grading/setup-checks.ts at version 1).
import type { Reason } from '../../domain/outcome.js';
import type { BenchmarkRecord } from '../../domain/record.js';
import type { Limit } from './types.js';
import { formatLimit, formatNumber, gradeValue } from './in-range.js';

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
