import { printable } from '../domain/text.js';
import type { LiveStatus } from '../run/context.js';
import { sci } from '../domain/number-format.js';

// m:ss, or h:mm:ss from an hour on.
function fmtDuration(s: number): string {
  const t = Math.max(0, Math.floor(s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = String(t % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${sec}` : `${m}:${sec}`;
}

function fmtRate(r: number): string {
  if (r === 0) return '0';
  if (r < 1000) return r.toFixed(r < 10 ? 1 : 0);
  return sci(r);
}

const celsius = (c: number | null | undefined) => (c === null || c === undefined ? '-' : `${c.toFixed(0)}C`);

// How much of a node's readings a line shows, most first: lanes, NIC temperature, GPU temperature and load; at the
// least, its worst lane alone.
type NodeDetail = 'all' | 'nic' | 'lanes' | 'worst';

function nodePart(s: LiveStatus, n: string, detail: NodeDetail): string {
  const rates = s.laneRates[n]!;
  if (detail === 'worst') {
    const w = worstLane(rates);
    return w < 0 ? `${printable(n)} -` : `${printable(n)} lane ${w} ${fmtRate(rates[w]!)}/s`;
  }
  const lanes = `${printable(n)} lanes ${rates.map(fmtRate).join('/') || '-'}/s`;
  if (detail === 'lanes') return lanes;
  const nic = `${lanes} NIC ${celsius(s.nicTempC[n])}`;
  if (detail === 'nic') return nic;
  const util = s.gpuUtilPct[n];
  return `${nic} GPU ${celsius(s.gpuTempC[n])}${util == null ? '' : ` ${util.toFixed(0)}%`}`;
}

// The index of the lane with the highest error rate (-1 without lanes).
function worstLane(rates: readonly number[]): number {
  return rates.reduce((w, r, i) => (w < 0 || r > rates[w]! ? i : w), -1);
}

// The run's live line: elapsed and the whole run's time left, the phase and its time left, then per node the lane
// error rates, NIC and GPU temperatures and GPU load, then throughput. It fits in `columns - 1` characters (a line
// as wide as the terminal wraps on some, and `\r` then redraws only its last row): detail is dropped from the right,
// throughput first, then GPU, NIC, every lane but each node's worst (the worst node first), the nodes from the
// right, the phase's time left; what still does not fit is cut with an ellipsis.
export function formatStatus(s: LiveStatus, columns = Infinity): string {
  const run = s.runRemainingS === null ? '' : `, ${fmtDuration(s.runRemainingS)} left`;
  const phase = s.phaseRemainingS === null ? '' : ` (${fmtDuration(s.phaseRemainingS)} left)`;
  const head = `[${fmtDuration(s.elapsedS)}${run}] ${printable(s.phase)}`;
  const names = Object.keys(s.laneRates);
  const nodes = (detail: NodeDetail, which = names) => which.map((n) => ` | ${nodePart(s, n, detail)}`).join('');
  const bw = s.throughputGbps === null ? '' : ` | ${s.throughputGbps.toFixed(1)} Gb/s`;
  const badFirst = [...names].sort((a, b) => Math.max(0, ...s.laneRates[b]!) - Math.max(0, ...s.laneRates[a]!));
  const variants = [
    head + phase + nodes('all') + bw,
    head + phase + nodes('all'),
    head + phase + nodes('nic'),
    head + phase + nodes('lanes'),
    ...badFirst.map((_, i) => head + phase + nodes('worst', badFirst.slice(0, badFirst.length - i))),
    head + phase,
    head,
  ];
  const width = Math.max(1, columns - 1);
  const fits = variants.find((v) => [...v].length <= width);
  if (fits !== undefined) return fits;
  return `${[...head].slice(0, width - 1).join('')}…`;
}
