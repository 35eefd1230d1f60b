// Live metrics of running qualifications (prom-client): per node and lane pre-FEC errors and rates, corrected bits,
// CRC, post-FEC and link-down events since the run's first sample, NIC and GPU temperature, GPU utilisation, phase,
// elapsed and remaining time, and the outcome once decided. Fed by the run's once-a-second LiveStatus.
import { Counter, Gauge, Registry, type OpenMetricsContentType } from 'prom-client';
import { canonicalRail, nextReading, type RailReading } from '../analysis/counters.js';
import { CURRENT_ANALYSIS, resetRuleOf } from '../analysis/analyze.js';
import { phyIsEmpty, type NodeSample } from '../domain/sample.js';

// The LiveStatus fields read here (src/run/context.ts), structurally: a missing one is left unset.
export interface MetricsStatus {
  phase: string;
  elapsedS: number;
  remainingS: number | null;
  laneRates?: Record<string, number[]>;
  nicTempC?: Record<string, number | null>;
  gpuTempC?: Record<string, number | null>;
  gpuUtilPct?: Record<string, number | null>;
  throughputGbps?: number | null;
  samples?: Record<string, NodeSample>;
}

// The runs one controller is making (one for `run`, one per bench for `batch`), as two registries: Prometheus text
// and OpenMetrics text hold the same metrics.
export class RunMetrics {
  readonly prometheus = new Registry();
  readonly openMetrics = new Registry<OpenMetricsContentType>();
  private readonly prev = new Map<string, RailReading>();
  private readonly phase = new Map<string, string>();
  private readonly info: Gauge;
  private readonly phaseG: Gauge;
  private readonly elapsed: Gauge;
  private readonly remaining: Gauge;
  private readonly laneErrors: Counter;
  private readonly laneRate: Gauge;
  private readonly correctedBits: Counter;
  private readonly crc: Counter;
  private readonly postFec: Counter;
  private readonly linkDown: Counter;
  private readonly nicTemp: Gauge;
  private readonly gpuTemp: Gauge;
  private readonly gpuUtil: Gauge;
  private readonly throughput: Gauge;
  private readonly outcome: Gauge;

  constructor() {
    this.openMetrics.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
    const registers = [this.prometheus, this.openMetrics];
    const g = (name: string, help: string, labelNames: string[]) => new Gauge({ name, help, labelNames, registers });
    const c = (name: string, help: string, labelNames: string[]) => new Counter({ name, help, labelNames, registers });
    this.info = g('cablequal_run_info', 'a qualification run on this controller (1)', ['run', 'label', 'protocol', 'simulated']);
    this.phaseG = g('cablequal_run_phase', 'the phase the run is in (1 for the current phase)', ['run', 'phase']);
    this.elapsed = g('cablequal_run_elapsed_seconds', 'seconds since the run started (run clock)', ['run']);
    this.remaining = g('cablequal_run_phase_remaining_seconds', 'seconds left in the current timed phase', ['run']);
    this.laneErrors = c('cablequal_lane_pre_fec_errors_total', 'pre-FEC errors per lane since the run started sampling (rx_err_lane_N_phy)', [
      'run',
      'node',
      'lane',
    ]);
    this.laneRate = g('cablequal_lane_pre_fec_errors_per_second', 'pre-FEC errors per second per lane over the last tick', ['run', 'node', 'lane']);
    this.correctedBits = c('cablequal_corrected_bits_total', 'bits corrected by RS-FEC since the run started sampling', ['run', 'node']);
    this.crc = c('cablequal_crc_errors_total', 'CRC errors since the run started sampling (rx_crc_errors_phy)', ['run', 'node']);
    this.postFec = c('cablequal_post_fec_errors_total', 'errors left after FEC since the run started sampling', ['run', 'node']);
    this.linkDown = c('cablequal_link_down_events_total', 'link-down events since the run started sampling (link_down_events_phy)', ['run', 'node']);
    this.nicTemp = g('cablequal_nic_temperature_celsius', 'ConnectX-7 temperature', ['run', 'node']);
    this.gpuTemp = g('cablequal_gpu_temperature_celsius', 'GPU temperature', ['run', 'node']);
    this.gpuUtil = g('cablequal_gpu_utilization_percent', 'GPU utilisation', ['run', 'node']);
    this.throughput = g('cablequal_throughput_gbps', 'last benchmark throughput (Gb/s)', ['run']);
    this.outcome = g('cablequal_run_outcome', "the run's outcome once decided (1 for it)", ['run', 'outcome']);
  }

  // A run began.
  started(run: string, o: { label: string | null; protocol: string; simulated: boolean }): void {
    this.info.set({ run, label: o.label ?? '', protocol: o.protocol, simulated: String(o.simulated) }, 1);
  }

  // The run's latest status: gauges set, counters advanced by the change since the previous sample.
  update(run: string, s: MetricsStatus): void {
    const before = this.phase.get(run);
    if (before !== s.phase) {
      if (before !== undefined) this.phaseG.remove({ run, phase: before });
      this.phase.set(run, s.phase);
      this.phaseG.set({ run, phase: s.phase }, 1);
    }
    this.elapsed.set({ run }, s.elapsedS);
    if (s.remainingS !== null) this.remaining.set({ run }, s.remainingS);
    else this.remaining.remove({ run });
    if (s.throughputGbps != null) this.throughput.set({ run }, s.throughputGbps);
    for (const [node, rates] of Object.entries(s.laneRates ?? {})) rates.forEach((r, lane) => this.laneRate.set({ run, node, lane: String(lane) }, r));
    const set = (gauge: Gauge, values: Record<string, number | null> | undefined) => {
      for (const [node, v] of Object.entries(values ?? {})) if (v !== null && v !== undefined) gauge.set({ run, node }, v);
    };
    set(this.nicTemp, s.nicTempC);
    set(this.gpuTemp, s.gpuTempC);
    set(this.gpuUtil, s.gpuUtilPct);
    for (const [node, sample] of Object.entries(s.samples ?? {})) this.advance(run, node, sample);
  }

  // The run's outcome (PASS, MARGINAL, FAIL, ERROR, ABORTED).
  decided(run: string, outcome: string): void {
    this.outcome.set({ run, outcome }, 1);
    const phase = this.phase.get(run);
    if (phase !== undefined) this.phaseG.remove({ run, phase });
    this.phase.delete(run);
    this.remaining.remove({ run });
  }

  private advance(run: string, node: string, sample: NodeSample): void {
    const read = canonicalRail(sample);
    if (!read || phyIsEmpty(read.phy)) return; // a tick whose ethtool -S failed: wait for the next
    const key = `${run}\u0000${node}`;
    const prev = this.prev.get(key);
    const { reading, interval } = nextReading(prev ?? null, read, sample.tMs, null, resetRuleOf(CURRENT_ANALYSIS));
    this.prev.set(key, reading);
    const labels = { run, node };
    if (!prev) {
      // The first sample is the baseline: every series exists from here on, at zero.
      for (let i = 0; i < Math.min(8, read.phy.laneErrors.length); i++) this.laneErrors.inc({ ...labels, lane: String(i) }, 0);
      for (const c of [this.correctedBits, this.crc, this.postFec, this.linkDown]) c.inc(labels, 0);
      return;
    }
    // The analysis's intervals: a counter that went down (driver reload) counts from zero, the same sample twice adds nothing.
    if (!interval || interval === 'reset') return;
    const d = interval.d;
    d.laneErrors.forEach((n, lane) => this.laneErrors.inc({ ...labels, lane: String(lane) }, n));
    if (d.correctedBits !== null) this.correctedBits.inc(labels, d.correctedBits);
    this.crc.inc(labels, d.crcErrors);
    this.postFec.inc(labels, d.postFecErrors);
    this.linkDown.inc(labels, d.linkDownEvents);
  }
}
