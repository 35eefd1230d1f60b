// docs/grafana-cablequal.json queries only metrics that --metrics-port serves, with labels they carry.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { RunMetrics } from '../../src/metrics/run-metrics.js';

describe('the Grafana dashboard in docs/', () => {
  it('every expression names a served metric and only its labels', () => {
    const dash = JSON.parse(readFileSync(join(process.cwd(), 'docs', 'grafana-cablequal.json'), 'utf8')) as {
      panels: { targets: { expr: string; legendFormat: string }[] }[];
      templating: { list: { definition: string }[] };
    };
    const served = new Map(new RunMetrics().prometheus.getMetricsAsArray().map((m) => [m.name, (m as unknown as { labelNames: string[] }).labelNames]));
    const exprs = [
      ...dash.panels.flatMap((p) => p.targets.map((t) => ({ expr: t.expr, legend: t.legendFormat }))),
      ...dash.templating.list.map((t) => ({ expr: t.definition, legend: '' })),
    ];
    expect(exprs.length).toBeGreaterThan(10);
    for (const { expr, legend } of exprs) {
      const names = [...expr.matchAll(/cablequal_[a-z_]+/g)].map((m) => m[0]);
      expect(names.length, expr).toBeGreaterThan(0);
      for (const n of names) {
        expect(served.has(n), `${n} in ${expr}`).toBe(true);
        const labels = served.get(n)!;
        for (const l of [...legend.matchAll(/\{\{(\w+)\}\}/g)].map((m) => m[1]!)) expect(labels, `${l} of ${n}`).toContain(l);
      }
    }
  });
});
