import type { LiveStatus } from '../run/context.js';

function fmtDuration(s: number): string {
  const m = Math.floor(s / 60);
  const sec = Math.floor(s % 60);
  return `${m}:${String(sec).padStart(2, '0')}`;
}

function fmtRate(r: number): string {
  if (r === 0) return '0';
  if (r < 1000) return r.toFixed(r < 10 ? 1 : 0);
  return r.toExponential(1);
}

// One line of live status: phase, elapsed/remaining, per-lane error rates on both nodes, temperatures, throughput.
export function formatStatus(s: LiveStatus): string {
  const nodes = Object.keys(s.laneRates)
    .map((n) => {
      const lanes = s.laneRates[n]!.map(fmtRate).join('/') || '-';
      const nic = s.nicTempC[n];
      const gpu = s.gpuTempC[n];
      const util = s.gpuUtilPct[n];
      return `${n} lanes ${lanes}/s NIC ${nic === null || nic === undefined ? '-' : `${nic.toFixed(0)}C`} GPU ${gpu == null ? '-' : `${gpu.toFixed(0)}C`}${util == null ? '' : ` ${util.toFixed(0)}%`}`;
    })
    .join(' | ');
  const remaining = s.remainingS === null ? '' : ` (${fmtDuration(s.remainingS)} left)`;
  const bw = s.throughputGbps === null ? '' : ` | ${s.throughputGbps.toFixed(1)} Gb/s`;
  return `[${fmtDuration(s.elapsedS)}] ${s.phase}${remaining} | ${nodes}${bw}`;
}
