// `cablequal watch --metrics-port`: an allowlist of series per cable in service, not every ethtool counter (a
// node_exporter ethtool collector exports hundreds per device: CLUSTERS.md "In service"). Per receiver: each lane's
// pre-FEC error rate over the last interval, the FEC margin of the last full window, the NIC temperature; per cable:
// link state and drops; per alarm: 1 while raised. The CLI feeds it from the watch's ticks and events.
import { Counter, Gauge, Registry, type OpenMetricsContentType } from 'prom-client';
import type { ReceiverFigures } from '../domain/service.js';

// One receiver's tick: the figures the series read (src/domain/service.ts).
export type ServiceTick = Pick<ReceiverFigures, 'cable' | 'serial' | 'node' | 'cage' | 'dtS' | 'laneErrors' | 'linkUp' | 'nicTempC' | 'marginDecades'>;

// An alarm's identity and state, structurally (src/watch/events.ts AlarmEvent / ClearEvent).
export interface ServiceAlarm {
  type: 'alarm' | 'clear';
  serial: string | null;
  cable: string;
  node: string;
  cage: number;
  rule: string;
  grade: string;
  lane: number | null;
}

export class ServiceMetrics {
  readonly prometheus = new Registry();
  readonly openMetrics = new Registry<OpenMetricsContentType>();
  private readonly laneRate: Gauge;
  private readonly margin: Gauge;
  private readonly temp: Gauge;
  private readonly linkUp: Gauge;
  private readonly drops: Counter;
  private readonly alarm: Gauge;

  constructor() {
    this.openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const registers = [this.prometheus, this.openMetrics];
    const where = ['serial', 'cable', 'node', 'cage'];
    this.laneRate = new Gauge({
      name: 'cablequal_service_lane_error_rate',
      help: 'pre-FEC errors per second of one lane over the last interval',
      labelNames: [...where, 'lane'],
      registers,
    });
    this.margin = new Gauge({
      name: 'cablequal_service_fec_margin_decades',
      help: 'decades between the worst lane of the last full FEC window and the RS(544,514) design input BER 2.4e-4 (+Inf: no errors)',
      labelNames: where,
      registers,
    });
    this.temp = new Gauge({ name: 'cablequal_service_nic_temperature_celsius', help: 'the receiving NIC temperature (hwmon)', labelNames: where, registers });
    this.linkUp = new Gauge({ name: 'cablequal_service_link_up', help: 'the link at this receiver is up (1) or down (0)', labelNames: where, registers });
    this.drops = new Counter({
      name: 'cablequal_service_link_drops_total',
      help: 'link drops of the cable seen by the watch',
      labelNames: ['serial', 'cable'],
      registers,
    });
    this.alarm = new Gauge({
      name: 'cablequal_service_alarm',
      help: 'an alarm of the watch, 1 while raised (0 once cleared)',
      labelNames: [...where, 'rule', 'grade', 'lane'],
      registers,
    });
  }

  tick(t: ServiceTick): void {
    const where = { serial: t.serial ?? '', cable: t.cable, node: t.node, cage: String(t.cage) };
    if (t.dtS > 0) t.laneErrors.forEach((n, lane) => this.laneRate.set({ ...where, lane: String(lane) }, n / t.dtS));
    if (t.marginDecades !== null) this.margin.set(where, t.marginDecades);
    if (t.nicTempC !== null) this.temp.set(where, t.nicTempC);
    if (t.linkUp !== null) this.linkUp.set(where, t.linkUp ? 1 : 0);
  }

  linkDown(serial: string | null, cable: string): void {
    this.drops.inc({ serial: serial ?? '', cable });
  }

  alarmEvent(a: ServiceAlarm): void {
    const labels = {
      serial: a.serial ?? '',
      cable: a.cable,
      node: a.node,
      cage: String(a.cage),
      rule: a.rule,
      grade: a.grade,
      lane: a.lane === null ? '' : String(a.lane),
    };
    this.alarm.set(labels, a.type === 'alarm' ? 1 : 0);
    // A FAIL raised over a MARGINAL of the same condition: the MARGINAL is no longer what is raised.
    if (a.type === 'alarm' && a.grade === 'FAIL') this.alarm.set({ ...labels, grade: 'MARGINAL' }, 0);
  }
}
