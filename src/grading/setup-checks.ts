// Conditions that make the run ERROR: the setup could not judge the cable, so they carry no grade.
import type { Limit } from '../domain/limit.js';
import type { Reason } from '../domain/outcome.js';
import type { BenchmarkRecord, NodePhaseStats } from '../domain/record.js';
import { formatLimit, formatNumber, gradeValue } from '../rules/in-range.js';

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

// A "loaded" soak whose GPUs were not busy would pass a cable that only fails hot (the failing clone did exactly that).
export function checkGpuLoaded(stats: readonly NodePhaseStats[], phase: string, min: Limit): Reason[] {
  const out: Reason[] = [];
  for (const s of stats.filter((x) => x.phase === phase)) {
    const v = s.gpuUtilMeanPct;
    if (v !== null && gradeValue(min, v) !== 'FAIL') continue;
    const base = {
      rule: min.rule,
      node: s.node,
      phase,
      unit: min.unit,
      limit: formatLimit(min),
      advice: 'check the GPU load command runs on both nodes (gpu_burn or a PyTorch matmul loop)',
    };
    out.push(
      v === null
        ? { ...base, message: `${s.node} ${phase}: no GPU utilisation readings during the GPU-loaded soak` }
        : { ...base, value: v, message: `${s.node} ${phase}: mean GPU utilisation ${formatNumber(v)} % (${formatLimit(min)}): the GPUs were not loaded` },
    );
  }
  return out;
}

// NCCL at ~13.9 GB/s with one device name is using one rail: a setup fault, not a cable fault.
export function checkRails(ncclDevices: readonly string[], expected: readonly string[]): Reason[] {
  const missing = expected.filter((d) => !ncclDevices.includes(d));
  if (missing.length === 0) return [];
  return [
    {
      rule: 'nccl-rails',
      value: ncclDevices.join(',') || '(none)',
      message: `NCCL used ${ncclDevices.length ? ncclDevices.join(', ') : 'no RDMA device'}; missing ${missing.join(', ')}: only part of the link was tested`,
      advice: `set NCCL_IB_HCA=${expected.join(',')} (both devices of the cabled port)`,
    },
  ];
}
