// Series the lead derives from journal.jsonl; writers take them as input so they never parse the journal themselves.

// One receiver's per-lane pre-FEC error rate at one moment.
export interface JournalPoint {
  node: string;
  tS: number; // seconds since the run started
  phase: string;
  laneRates: number[]; // errors/s per lane (rx_err_lane_N_phy delta / interval)
  nicTempC: number | null;
  readings?: Record<string, number | null>; // registered extra readings (src/probes/readings.ts) at that tick
}

// Throughput of one rail at one moment.
export interface ThroughputPoint {
  rail: number;
  tS: number;
  gbps: number;
  direction?: string; // "<sender>-><receiver>" when each direction was its own stream
}

// Everything the charts and timeseries.csv need.
export interface RunTimeseries {
  points: JournalPoint[];
  throughput: ThroughputPoint[];
}

// A run without series still gets a certificate (charts say "no data").
export const EMPTY_TIMESERIES: RunTimeseries = { points: [], throughput: [] };
