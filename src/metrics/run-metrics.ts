// Live metrics of running qualifications (prom-client): per node and lane pre-FEC errors and rates, corrected bits,
// CRC, post-FEC and link-down events since the run's first sample, NIC and GPU temperature, GPU utilisation, phase,
// elapsed and remaining time, and the outcome once decided. Fed by the run's once-a-second LiveStatus.
import { Counter, Gauge, Registry, type OpenMetricsContentType } from 'prom-client';
import type { CountedTotals } from '../analysis/intervals.js';

// The LiveStatus fields read here (src/run/context.ts), structurally: a missing one is left unset.
export interface MetricsStatus {
  phase: string;
  elapsedS: number;
  phaseRemainingS: number | null;
  runRemainingS: number | null;
  laneRates?: Record<string, number[]>;
  nicTempC?: Record<string, number | null>;
  gpuTempC?: Record<string, number | null>;
  gpuUtilPct?: Record<string, number | null>;
  throughputGbps?: number | null;
  counted?: Record<string, CountedTotals>;
}

// The runs one controller is making (one for `run`, one per bench for `batch`), as two registries: Prometheus text
// and OpenMetrics text hold the same metrics.
export class RunMetrics {
  readonly prometheus = new Registry();
  readonly openMetrics = new Registry<OpenMetricsContentType>();
  private readonly prev = new Map<string, CountedTotals>();
  private readonly phase = new Map<string, string>();
  private readonly info: Gauge;
  private readonly phaseG: Gauge;
  private readonly elapsed: Gauge;
  private readonly remaining: Gauge;
  private readonly runRemaining: Gauge;
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
    this.runRemaining = g('cablequal_run_remaining_seconds', 'seconds left in the whole procedure, at least (an early stop ends it sooner)', ['run']);
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
    if (s.phaseRemainingS !== null) this.remaining.set({ run }, s.phaseRemainingS);
    else this.remaining.remove({ run });
    if (s.runRemainingS !== null) this.runRemaining.set({ run }, s.runRemainingS);
    else this.runRemaining.remove({ run });
    if (s.throughputGbps != null) this.throughput.set({ run }, s.throughputGbps);
    for (const [node, rates] of Object.entries(s.laneRates ?? {})) rates.forEach((r, lane) => this.laneRate.set({ run, node, lane: String(lane) }, r));
    const set = (gauge: Gauge, values: Record<string, number | null> | undefined) => {
      for (const [node, v] of Object.entries(values ?? {})) if (v !== null && v !== undefined) gauge.set({ run, node }, v);
    };
    set(this.nicTemp, s.nicTempC);
    set(this.gpuTemp, s.gpuTempC);
    set(this.gpuUtil, s.gpuUtilPct);
    for (const [node, totals] of Object.entries(s.counted ?? {})) this.advance(run, node, totals);
  }

  // The run's outcome (PASS, MARGINAL, FAIL, ERROR, ABORTED).
  decided(run: string, outcome: string): void {
    this.outcome.set({ run, outcome }, 1);
    const phase = this.phase.get(run);
    if (phase !== undefined) this.phaseG.remove({ run, phase });
    this.phase.delete(run);
    this.remaining.remove({ run });
    this.runRemaining.remove({ run });
  }

  // Counters advanced by what the node counted since the last status (the run's intervals, taken once by its loop).
  private advance(run: string, node: string, t: CountedTotals): void {
    const key = `${run}\u0000${node}`;
    const prev = this.prev.get(key);
    this.prev.set(key, { ...t, laneErrors: [...t.laneErrors] });
    const labels = { run, node };
    const by = (now: number, before: number | undefined) => Math.max(0, now - (before ?? 0));
    // Every series exists from the node's first sample on, at zero.
    t.laneErrors.forEach((n, lane) => this.laneErrors.inc({ ...labels, lane: String(lane) }, by(n, prev?.laneErrors[lane])));
    this.correctedBits.inc(labels, by(t.correctedBits, prev?.correctedBits));
    this.crc.inc(labels, by(t.crcErrors, prev?.crcErrors));
    this.postFec.inc(labels, by(t.postFecErrors, prev?.postFecErrors));
    this.linkDown.inc(labels, by(t.linkDownEvents, prev?.linkDownEvents));
  }
}
