import type { PhaseRecord } from '../domain/record.js';
import { escapeXml } from './escape.js';
import type { JournalPoint, ThroughputPoint } from './series.js';

// Inline SVG only: the certificate must render offline and print identically, so no chart library or script.

const LANE_COLOURS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd', '#ff7f0e', '#8c564b', '#e377c2', '#17becf'];
const PHASE_FILLS = ['#f2f2f2', '#e4ecf7', '#f7ece4', '#e8f4e4'];

export interface ChartBox {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

const BOX: ChartBox = { width: 700, height: 180, left: 52, right: 44, top: 22, bottom: 26 };

// Long runs have thousands of ticks: keep at most this many points per series (each the max of its time bucket).
export const MAX_POINTS_PER_SERIES = 200;

interface Bucketed {
  tS: number;
  value: number;
}

// Max per bucket keeps spikes visible, which is what the chart is for (a mean would hide a one-lane burst).
export function bucketMax(series: Bucketed[], tMax: number, maxPoints = MAX_POINTS_PER_SERIES): Bucketed[] {
  if (series.length <= maxPoints) return series;
  const width = tMax / maxPoints || 1;
  const out = new Map<number, Bucketed>();
  for (const p of series) {
    const b = Math.min(maxPoints - 1, Math.floor(p.tS / width));
    const cur = out.get(b);
    if (!cur || p.value > cur.value) out.set(b, { tS: cur ? Math.min(cur.tS, p.tS) : p.tS, value: Math.max(cur?.value ?? -Infinity, p.value) });
  }
  return [...out.entries()].sort((a, b) => a[0] - b[0]).map(([, v]) => v);
}

const r1 = (v: number) => Math.round(v * 10) / 10;

function pathOf(xy: [number, number][]): string {
  return xy.map(([x, y], i) => `${i === 0 ? 'M' : 'L'}${r1(x)},${r1(y)}`).join(' ');
}

function phaseBands(phases: PhaseRecord[], x: (t: number) => number, b: ChartBox, tMax: number): string {
  return phases
    .map((ph, i) => {
      const x0 = x(Math.max(0, ph.startS));
      const x1 = x(Math.min(tMax, ph.endS ?? tMax));
      if (!(x1 > x0)) return '';
      return (
        `<rect class="phase" x="${r1(x0)}" y="${b.top}" width="${r1(x1 - x0)}" height="${b.height - b.top - b.bottom}" fill="${PHASE_FILLS[i % PHASE_FILLS.length]}"/>` +
        `<text class="phase-label" x="${r1(x0 + 3)}" y="${b.top + 10}" font-size="9" fill="#555">${escapeXml(ph.name)}</text>`
      );
    })
    .join('');
}

function timeAxis(x: (t: number) => number, b: ChartBox, tMax: number): string {
  const stepMin = [1, 2, 5, 10, 15, 30, 60].find((m) => tMax / 60 / m <= 8) ?? 120;
  const ticks: string[] = [];
  for (let m = 0; m * 60 <= tMax + 1e-9; m += stepMin) {
    const xx = r1(x(m * 60));
    ticks.push(
      `<line x1="${xx}" x2="${xx}" y1="${b.height - b.bottom}" y2="${b.height - b.bottom + 4}" stroke="#333"/>` +
        `<text x="${xx}" y="${b.height - b.bottom + 14}" font-size="9" text-anchor="middle">${m}</text>`,
    );
  }
  return ticks.join('') + `<text x="${b.width - b.right}" y="${b.height - 2}" font-size="9" text-anchor="end">minutes since start</text>`;
}

function frame(b: ChartBox): string {
  return `<rect x="${b.left}" y="${b.top}" width="${b.width - b.left - b.right}" height="${b.height - b.top - b.bottom}" fill="none" stroke="#333" stroke-width="0.8"/>`;
}

function svgOpen(b: ChartBox, cls: string, label: string): string {
  return `<svg class="chart ${cls}" xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${b.width} ${b.height}" width="100%" role="img" aria-label="${escapeXml(label)}" font-family="sans-serif">`;
}

// A short strip, not an empty full-height frame: the page budget is two A4 sheets.
function noData(b: ChartBox, cls: string, title: string): string {
  const s = { ...b, height: 28 };
  return `${svgOpen(s, `${cls} no-data`, title)}<rect x="${s.left}" y="2" width="${s.width - s.left - s.right}" height="24" fill="#f6f6f6" stroke="#ccc"/><text x="${s.width / 2}" y="18" text-anchor="middle" font-size="10">${escapeXml(title)}: no data</text></svg>`;
}

export interface LaneChartInput {
  title: string;
  points: JournalPoint[]; // one receiver
  phases: PhaseRecord[];
  tMax?: number;
}

// Per-lane pre-FEC error rate on a log axis; a zero rate sits on its own "0" line below the lowest decade.
export function laneRateChart(input: LaneChartInput): string {
  const b = BOX;
  const { points, phases } = input;
  if (points.length === 0) return noData(b, 'lane-chart', input.title);
  const tMax = Math.max(input.tMax ?? 0, ...points.map((p) => p.tS), ...phases.map((p) => p.endS ?? p.startS), 1);
  const laneCount = Math.max(...points.map((p) => p.laneRates.length));
  const positives = points.flatMap((p) => p.laneRates.filter((r) => r > 0 && Number.isFinite(r)));
  const lo = positives.length ? Math.floor(Math.log10(Math.min(...positives))) : -1;
  let hi = positives.length ? Math.ceil(Math.log10(Math.max(...positives))) : 1;
  if (hi <= lo) hi = lo + 1;
  const zeroGap = 12; // px between the "0" line and the lowest decade
  const plotTop = b.top + 14; // room for phase labels
  const yZero = b.height - b.bottom - 2;
  const yLo = yZero - zeroGap;
  const x = (t: number) => b.left + (t / tMax) * (b.width - b.left - b.right);
  const y = (r: number) => (r > 0 ? yLo - ((Math.log10(r) - lo) / (hi - lo)) * (yLo - plotTop) : yZero);

  const parts: string[] = [svgOpen(b, 'lane-chart', input.title), phaseBands(phases, x, b, tMax), frame(b)];
  for (let e = lo; e <= hi; e++) {
    const yy = r1(y(10 ** e));
    parts.push(
      `<line x1="${b.left}" x2="${b.width - b.right}" y1="${yy}" y2="${yy}" stroke="#ccc" stroke-width="0.5"/><text x="${b.left - 4}" y="${yy + 3}" font-size="9" text-anchor="end">1e${e}</text>`,
    );
  }
  parts.push(
    `<line x1="${b.left}" x2="${b.width - b.right}" y1="${yZero}" y2="${yZero}" stroke="#999" stroke-dasharray="2,2" stroke-width="0.5"/><text x="${b.left - 4}" y="${yZero + 3}" font-size="9" text-anchor="end">0</text>`,
  );
  parts.push(
    `<text x="12" y="${(b.top + b.height - b.bottom) / 2}" font-size="9" text-anchor="middle" transform="rotate(-90 12 ${(b.top + b.height - b.bottom) / 2})">errors/s (log)</text>`,
  );

  for (let lane = 0; lane < laneCount; lane++) {
    const series = bucketMax(
      points.filter((p) => p.laneRates[lane] !== undefined && Number.isFinite(p.laneRates[lane]!)).map((p) => ({ tS: p.tS, value: p.laneRates[lane]! })),
      tMax,
    );
    const xy = series.map((p) => [x(p.tS), y(p.value)] as [number, number]);
    const c = LANE_COLOURS[lane % LANE_COLOURS.length]!;
    parts.push(`<path class="series lane lane-${lane}" d="${pathOf(xy)}" fill="none" stroke="${c}" stroke-width="1.2"/>`);
    parts.push(xy.map(([px, py]) => `<circle class="pt lane-${lane}" cx="${r1(px)}" cy="${r1(py)}" r="1.3" fill="${c}"/>`).join(''));
  }

  // NIC temperature on the right axis.
  const temps = points.filter((p) => p.nicTempC !== null && Number.isFinite(p.nicTempC)).map((p) => ({ tS: p.tS, value: p.nicTempC! }));
  if (temps.length) {
    const tLo = Math.floor(Math.min(...temps.map((t) => t.value)) / 10) * 10;
    const tHi = Math.max(tLo + 10, Math.ceil(Math.max(...temps.map((t) => t.value)) / 10) * 10);
    const yt = (c: number) => yZero - ((c - tLo) / (tHi - tLo)) * (yZero - plotTop);
    const series = bucketMax(temps, tMax);
    parts.push(
      `<path class="series temp" d="${pathOf(series.map((p) => [x(p.tS), yt(p.value)]))}" fill="none" stroke="#e6550d" stroke-width="1" stroke-dasharray="4,2"/>`,
    );
    for (let c = tLo; c <= tHi; c += 10) {
      parts.push(`<text x="${b.width - b.right + 4}" y="${r1(yt(c)) + 3}" font-size="9" fill="#e6550d">${c}</text>`);
    }
    parts.push(
      `<text x="${b.width - 6}" y="${(b.top + b.height - b.bottom) / 2}" font-size="9" fill="#e6550d" text-anchor="middle" transform="rotate(90 ${b.width - 6} ${(b.top + b.height - b.bottom) / 2})">NIC °C</text>`,
    );
  }

  parts.push(timeAxis(x, b, tMax));
  // Legend right-aligned so it never runs into the title.
  const lx = b.width - b.right - laneCount * 46 - (temps.length ? 100 : 0);
  const legend = [...Array(laneCount).keys()].map(
    (l, i) =>
      `<rect x="${lx + i * 46}" y="6" width="8" height="8" fill="${LANE_COLOURS[l % LANE_COLOURS.length]}"/><text x="${lx + 11 + i * 46}" y="14" font-size="9">lane ${l}</text>`,
  );
  parts.push(`<text x="${b.left}" y="14" font-size="10" font-weight="bold">${escapeXml(input.title)}</text>`, ...legend);
  if (temps.length)
    parts.push(
      `<line x1="${lx + laneCount * 46}" x2="${lx + laneCount * 46 + 14}" y1="10" y2="10" stroke="#e6550d" stroke-dasharray="4,2"/><text x="${lx + laneCount * 46 + 17}" y="14" font-size="9">NIC temperature</text>`,
    );
  parts.push('</svg>');
  return parts.join('');
}

export interface ThroughputChartInput {
  title: string;
  points: ThroughputPoint[];
  phases: PhaseRecord[];
  tMax?: number;
}

// Gb/s per rail over time on a linear axis from zero, so a throttled rail (~13 Gb/s) stands out.
export function throughputChart(input: ThroughputChartInput): string {
  const b = { ...BOX, height: 130 };
  const { points, phases } = input;
  if (points.length === 0) return noData(b, 'throughput-chart', input.title);
  const tMax = Math.max(input.tMax ?? 0, ...points.map((p) => p.tS), ...phases.map((p) => p.endS ?? p.startS), 1);
  const vMax = Math.max(10, Math.ceil(Math.max(...points.map((p) => p.gbps)) / 20) * 20);
  const plotTop = b.top + 14;
  const x = (t: number) => b.left + (t / tMax) * (b.width - b.left - b.right);
  const y = (v: number) => b.height - b.bottom - (v / vMax) * (b.height - b.bottom - plotTop);
  const parts: string[] = [svgOpen(b, 'throughput-chart', input.title), phaseBands(phases, x, b, tMax), frame(b)];
  const step = vMax / 4;
  for (let v = 0; v <= vMax + 1e-9; v += step) {
    const yy = r1(y(v));
    parts.push(
      `<line x1="${b.left}" x2="${b.width - b.right}" y1="${yy}" y2="${yy}" stroke="#ccc" stroke-width="0.5"/><text x="${b.left - 4}" y="${yy + 3}" font-size="9" text-anchor="end">${Math.round(v)}</text>`,
    );
  }
  parts.push(
    `<text x="12" y="${(b.top + b.height - b.bottom) / 2}" font-size="9" text-anchor="middle" transform="rotate(-90 12 ${(b.top + b.height - b.bottom) / 2})">Gb/s</text>`,
  );
  // One series per rail, and per direction when each direction was its own stream (a weaker direction stays visible).
  const keyOf = (p: ThroughputPoint) => `${p.rail}|${p.direction ?? ''}`;
  const keys = [...new Set(points.map(keyOf))].sort();
  const directions = [...new Set(points.map((p) => p.direction).filter((d): d is string => d !== undefined))].sort();
  const slot = directions.length > 1 ? 64 : 46;
  keys.forEach((key, i) => {
    const [railText, direction] = key.split('|') as [string, string];
    const rail = Number(railText);
    const series = bucketMax(
      points.filter((p) => keyOf(p) === key && Number.isFinite(p.gbps)).map((p) => ({ tS: p.tS, value: p.gbps })),
      tMax,
    );
    const xy = series.map((p) => [x(p.tS), y(p.value)] as [number, number]);
    const c = LANE_COLOURS[i % LANE_COLOURS.length]!;
    const label = direction ? `rail ${rail} ${directions.indexOf(direction) === 0 ? '→' : '←'}` : `rail ${rail}`;
    parts.push(`<path class="series rail rail-${rail}" d="${pathOf(xy)}" fill="none" stroke="${c}" stroke-width="1.2"/>`);
    parts.push(xy.map(([px, py]) => `<circle class="pt rail-${rail}" cx="${r1(px)}" cy="${r1(py)}" r="1.3" fill="${c}"/>`).join(''));
    const lx = b.width - b.right - keys.length * slot;
    parts.push(
      `<rect x="${lx + i * slot}" y="6" width="8" height="8" fill="${c}"/><text x="${lx + 11 + i * slot}" y="14" font-size="9">${escapeXml(label)}</text>`,
    );
  });
  if (directions.length > 1) parts.push(`<text x="${b.left + 160}" y="14" font-size="9">→ ${escapeXml(directions[0]!)}, ← ${escapeXml(directions[1]!)}</text>`);
  parts.push(timeAxis(x, b, tMax), `<text x="${b.left}" y="14" font-size="10" font-weight="bold">${escapeXml(input.title)}</text>`, '</svg>');
  return parts.join('');
}
