// The watch's metrics are an allowlist (five series and a counter), and the Grafana panels and Prometheus rules shipped
// in docs/ query only those, with labels they carry.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ServiceMetrics } from '../../src/metrics/service-metrics.js';

const where = { cable: 'spark-a:1--spark-b:1', serial: 'ONT2403150288', node: 'spark-b', cage: 1 };

describe('watch metrics', () => {
  it('serve the allowlist only, with the last tick and the alarms raised', async () => {
    const m = new ServiceMetrics();
    m.tick({ ...where, dtS: 10, laneErrors: [400, 360, 29000, 440], linkUp: true, nicTempC: 61.5, marginDecades: 3.4 });
    m.alarmEvent({ type: 'alarm', ...where, rule: 'lane-ratio', grade: 'MARGINAL', lane: 2 });
    m.alarmEvent({ type: 'alarm', ...where, rule: 'lane-ratio', grade: 'FAIL', lane: 2 });
    m.linkDown(where.serial, where.cable);
    const names = m.prometheus
      .getMetricsAsArray()
      .map((x) => x.name)
      .sort();
    expect(names).toEqual([
      'cablequal_service_alarm',
      'cablequal_service_fec_margin_decades',
      'cablequal_service_lane_error_rate',
      'cablequal_service_link_drops_total',
      'cablequal_service_link_up',
      'cablequal_service_nic_temperature_celsius',
    ]);
    const text = await m.prometheus.metrics();
    expect(text).toContain('cablequal_service_lane_error_rate{serial="ONT2403150288",cable="spark-a:1--spark-b:1",node="spark-b",cage="1",lane="2"} 2900');
    expect(text).toContain(
      'cablequal_service_alarm{serial="ONT2403150288",cable="spark-a:1--spark-b:1",node="spark-b",cage="1",rule="lane-ratio",grade="FAIL",lane="2"} 1',
    );
    expect(text).toContain('grade="MARGINAL",lane="2"} 0');
    expect(text).toContain('cablequal_service_link_drops_total{serial="ONT2403150288",cable="spark-a:1--spark-b:1"} 1');
    m.alarmEvent({ type: 'clear', ...where, rule: 'lane-ratio', grade: 'FAIL', lane: 2 });
    expect(await m.prometheus.metrics()).toContain('grade="FAIL",lane="2"} 0');
  });

  it("docs' Grafana panels and Prometheus rules query served series and their labels", () => {
    const served = new Map(new ServiceMetrics().prometheus.getMetricsAsArray().map((x) => [x.name, (x as unknown as { labelNames: string[] }).labelNames]));
    const dash = JSON.parse(readFileSync('docs/grafana-cablequal-service.json', 'utf8')) as { panels: { targets: { expr: string; legendFormat: string }[] }[] };
    const rules = readFileSync('docs/prometheus-cablequal-service-rules.yml', 'utf8');
    const exprs = [
      ...dash.panels.flatMap((p) => p.targets.map((t) => t.expr + ' ' + t.legendFormat)),
      ...[...rules.matchAll(/^\s+(?:expr|summary): (.+)$/gm)].map((x) => x[1]!),
    ];
    expect(exprs.length).toBeGreaterThan(10);
    for (const e of exprs) {
      for (const n of [...e.matchAll(/cablequal_service_[a-z_]+/g)].map((x) => x[0])) {
        expect(served.has(n), `${n} in ${e}`).toBe(true);
        for (const l of [...e.matchAll(/\{\{\s*\$?\.?(?:labels\.)?(\w+)\s*\}\}|\$labels\.(\w+)/g)].map((x) => x[1] ?? x[2]!)) {
          if (l === 'value') continue;
          expect(served.get(n), `${l} of ${n} in ${e}`).toContain(l);
        }
      }
    }
  });
});
