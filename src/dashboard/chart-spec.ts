// What the page's script draws for an embedded chart (src/dashboard/client-script.ts): the data and how to read it,
// decided on the server so that every chart's axes are right by construction (integer run numbers, a y range that
// holds the limit lines, histogram bars from zero that fit their bins).
import { esc, jsonScript } from './html.js';

// One series of a chart: its values on the chart's x, and how it is drawn.
export interface ChartSeries {
  label: string;
  values: (number | null)[];
  colour?: string;
  style?: 'line' | 'points' | 'bars' | 'dash'; // dash: a limit or reference line
}

// One embedded chart: its kind, data and the axes' labels, ticks and ranges.
export interface ChartSpec {
  title: string;
  kind: 'bars' | 'points' | 'control';
  x: number[];
  xLabel: string;
  yLabel: string;
  series: ChartSeries[];
  xTicks?: 'integer' | 'log10'; // integer: whole numbers only (run counts); log10: labelled 1e-14, 1e-13, ...
  yTicks?: 'integer';
  xRange?: [number, number];
  yRange?: [number, number];
  barWidth?: number; // bars: the bin width in x units
}

// The colour of each outcome in the charts (the tables' cell colours, darker).
export const OUTCOME_COLOURS: Record<string, string> = { PASS: '#2ca02c', MARGINAL: '#e6a700', FAIL: '#d62728', ERROR: '#7f7f7f', ABORTED: '#7f7f7f' };

// A chart for the page's script: an element with the data as JSON beside it.
export function chartSpec(id: string, spec: ChartSpec): string {
  return `<div class="chart" id="${esc(id)}"><div class="chart-title">${esc(spec.title)}</div></div>${jsonScript(`${id}-data`, spec, ' data-chart')}`;
}
