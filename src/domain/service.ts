// A cable in service (`cablequal watch`): what one receiver counted at one tick, declared once for the watch that
// derives it (src/watch/watcher.ts), the journal and store that keep it, and the metrics that serve it.

// One tick's figures of one receiver, for the journal's history, the store and the metrics.
export interface ReceiverFigures {
  cable: string;
  serial: string | null;
  node: string;
  cage: number;
  dtS: number;
  laneErrors: number[];
  correctedBits: number | null;
  crcErrors: number;
  postFecErrors: number;
  linkDownEvents: number;
  linkUp: boolean | null;
  nicTempC: number | null;
  marginDecades: number | null;
  alarms: number;
  // The counters as read at this tick (the larger of the cage's functions, decimal strings: 64-bit), so the journal
  // keeps what was read and not only what was derived from it.
  counters: Record<string, string | string[]>;
}
