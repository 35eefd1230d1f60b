// Extra readings the sampler takes on every node, each declared once: the command, its parser, its sample-set period,
// where its value lands (NodeSample.readings[id]) and the simulated lab's answer. From this entry alone the reading is
// asked in every tick's batch (src/sampling/sample-set.ts), journaled with the sample, summarised per node and phase by
// the analysis (min, mean, max), written as a timeseries.csv column and printed on the certificate; `sim` answers it.
// How to add one: docs/adding-a-probe.md.

// What the simulated lab tells a reading's answer: which node, at what lab time.
export interface SimulatedNode {
  node: string;
  nowMs: number;
}

// One reading: a gauge of the node (a number, or null where the node reports none).
export interface ReadingProbe {
  // Lower-case words joined by '-', the unit last (`module-temp-c`): tick-script item `reading:<id>`, key in
  // NodeSample.readings, the timeseries.csv column (with '_' for '-') and the certificate's name for it, so the
  // journal and every output say the unit without this registry.
  id: string;
  describe: string; // what it is, one line (CSV column doc, certificate)
  periodS: number; // read on ticks this many seconds apart (at least every tick)
  command: () => string; // what the node runs; its stdout is untrusted input
  parse: (text: string) => number | null; // pure; throws a ParseError on text it cannot read
  simulate: (at: SimulatedNode) => string; // the simulated lab's stdout for command() (generated, never presented as recorded)
}

// The readings every run takes, in column order. A new one is an entry here (and its parser beside it).
const READINGS: ReadingProbe[] = [];

const ID = /^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$/;

// The registered readings (a copy: register through registerReading()).
export function readings(): readonly ReadingProbe[] {
  return READINGS;
}

/** Add a reading; returns the function that removes it again (tests register theirs for one run). @internal */
export function registerReading(r: ReadingProbe): () => void {
  if (!ID.test(r.id)) throw new Error(`reading id ${JSON.stringify(r.id)}: expected lower-case words joined by '-'`);
  if (READINGS.some((x) => x.id === r.id)) throw new Error(`reading ${r.id} is already registered`);
  if (!(r.periodS > 0)) throw new Error(`reading ${r.id}: period ${r.periodS} s, expected > 0`);
  READINGS.push(r);
  return () => {
    const i = READINGS.indexOf(r);
    if (i >= 0) READINGS.splice(i, 1);
  };
}

// The reading whose command is exactly this one (how the simulated lab recognises it), or undefined.
export function readingOfCommand(command: string): ReadingProbe | undefined {
  return READINGS.find((r) => r.command() === command);
}
