// What a soak's journal lines say about its loads (rules version 3 on). src/run/steps/soak-loads.ts writes them as the
// soak runs: when the link load and each node's GPU load started, every throughput row of each link-load client as it
// was read, every load process that ended by itself, and when the soak stopped its loads. The live run applies each
// line it writes to its own evidence with the same function a re-grade applies the journal's lines with, and both hand
// that evidence to the same checks (link-load-check.ts, gpu-load-check.ts). Journal lines are untrusted: a line or an
// entry without the fields read here is left out.

// One link-load stream: the ib_write_bw client on `from` sending to the server on `to`, on one rail.
export interface LoadStreamId {
  rail: number;
  from: string;
  to: string;
}

// One read of the link-load clients' output: per stream the rows printed since the last read (Gb/s), and why none
// could be read when the output was not ib_write_bw's.
export interface LinkRowsRead {
  tS: number;
  streams: (LoadStreamId & { gbps: number[]; error?: string })[];
}

// Another cable whose link load shared this soak's nodes (two cables between the same nodes qualified at once: the
// other cage's), as the link load's start line names it.
export interface SharingCable {
  cage: number;
  serial: string | null;
  runId: string | null;
}

// A load process that ended by itself during a soak (the soak stopping it at its end is not an exit).
export interface LoadExit {
  tS: number;
  load: 'link' | 'gpu';
  node: string;
  process: string;
  exitCode: number | null;
  stream?: LoadStreamId;
}

// Everything a soak's journal lines say about its loads.
export interface SoakLoadEvidence {
  linkStartS: number | null; // when the link-load clients had been started (null: no link load-start line)
  streams: LoadStreamId[];
  // The other cable whose link load shared the nodes' rails from the start of this one (a Spark has two cages: at most
  // one), and when its load stopped (its early FAIL: this cable had the rails alone from then on; null: to the end).
  // Each row is judged against its cable's share of the benchmark figure when it was read.
  sharedWith: SharingCable[];
  sharedUntilS: number | null;
  reads: LinkRowsRead[];
  rowsSoFar: Map<string, number>; // stream key -> rows read so far (where the next read's rows continue)
  gpuStartS: Map<string, number>; // node -> when its GPU load process had been started
  exits: LoadExit[];
  stoppedS: number | null; // when the soak stopped its loads (the end of the loaded window)
}

// The journal line types the soak writes.
export const LOAD_LINES = { start: 'load-start', rows: 'load-rows', exit: 'load-exit', stop: 'load-stop', sharing: 'load-sharing' } as const;

type Line = { type: string } & Record<string, unknown>;

// A stream's key in maps: "<from>-><to>#<rail>".
export const streamKey = (s: LoadStreamId): string => `${s.from}->${s.to}#${s.rail}`;

// "spark-a -> spark-b rail 0".
export const streamName = (s: LoadStreamId): string => `${s.from} -> ${s.to} rail ${s.rail}`;

export function emptyEvidence(): SoakLoadEvidence {
  return {
    linkStartS: null,
    streams: [],
    sharedWith: [],
    sharedUntilS: null,
    reads: [],
    rowsSoFar: new Map(),
    gpuStartS: new Map(),
    exits: [],
    stoppedS: null,
  };
}

const isName = (v: unknown): v is string => typeof v === 'string' && v.length > 0 && v.length <= 256;
const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v) && v >= 0;
const isRail = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v < 16;

function streamOf(o: unknown): LoadStreamId | null {
  if (o === null || typeof o !== 'object') return null;
  const x = o as Record<string, unknown>;
  return isRail(x['rail']) && isName(x['from']) && isName(x['to']) ? { rail: x['rail'], from: x['from'], to: x['to'] } : null;
}

// The cable a link load shared the nodes with: a Spark's other cage, one at most (more entries are not read).
function sharingOf(v: unknown): SharingCable[] {
  if (!Array.isArray(v)) return [];
  const x = v[0] as Record<string, unknown> | null | undefined;
  if (x === null || typeof x !== 'object' || (x['cage'] !== 0 && x['cage'] !== 1)) return [];
  return [{ cage: x['cage'], serial: isName(x['serial']) ? x['serial'] : null, runId: isName(x['runId']) ? x['runId'] : null }];
}

// Apply one journal line to the soaks' evidence (lines of other types, or without the fields read, change nothing).
export function applyLoadLine(soaks: Map<string, SoakLoadEvidence>, line: Line): void {
  if (!Object.values(LOAD_LINES).includes(line.type as never) || !isName(line['phase']) || !isTime(line.tS)) return;
  let e = soaks.get(line['phase']);
  if (!e) soaks.set(line['phase'], (e = emptyEvidence()));
  const tS = line.tS;
  if (line.type === LOAD_LINES.start && line['load'] === 'link' && Array.isArray(line['streams'])) {
    e.linkStartS = tS;
    e.streams = line['streams'].map(streamOf).filter((s): s is LoadStreamId => s !== null);
    e.sharedWith = sharingOf(line['sharedWith']);
  } else if (line.type === LOAD_LINES.start && line['load'] === 'gpu' && isName(line['node'])) {
    e.gpuStartS.set(line['node'], tS);
  } else if (line.type === LOAD_LINES.rows && Array.isArray(line['streams'])) {
    const streams: LinkRowsRead['streams'] = [];
    for (const o of line['streams'] as unknown[]) {
      const id = streamOf(o);
      if (!id) continue;
      const x = o as Record<string, unknown>;
      const rows = Array.isArray(x['gbps']) ? x['gbps'].filter((g): g is number => typeof g === 'number' && Number.isFinite(g) && g >= 0) : [];
      // Rows continue where the stream's last read ended; a read that repeats rows already read adds only the new ones.
      const first = Number.isSafeInteger(x['first']) ? (x['first'] as number) : null;
      const had = e.rowsSoFar.get(streamKey(id)) ?? 0;
      const fresh = first !== null && first < had ? rows.slice(had - first) : rows;
      e.rowsSoFar.set(streamKey(id), had + fresh.length);
      streams.push({ ...id, gbps: fresh, ...(isName(x['error']) ? { error: x['error'] } : {}) });
    }
    e.reads.push({ tS, streams });
  } else if (line.type === LOAD_LINES.exit && (line['load'] === 'link' || line['load'] === 'gpu') && isName(line['node']) && isName(line['process'])) {
    const exitCode = typeof line['exitCode'] === 'number' && Number.isInteger(line['exitCode']) ? line['exitCode'] : null;
    const stream = streamOf(line);
    e.exits.push({ tS, load: line['load'], node: line['node'], process: line['process'], exitCode, ...(stream ? { stream } : {}) });
  } else if (line.type === LOAD_LINES.stop) {
    e.stoppedS = tS;
  } else if (line.type === LOAD_LINES.sharing && Array.isArray(line['sharedWith']) && line['sharedWith'].length === 0) {
    // The other cable's load has stopped: from here on this one has the rails alone.
    e.sharedUntilS ??= tS;
  }
}

// Per soak (by phase name), what the journal's load lines say, in journal order.
export function soakLoadsOf(lines: readonly Line[]): Map<string, SoakLoadEvidence> {
  const soaks = new Map<string, SoakLoadEvidence>();
  for (const l of lines) applyLoadLine(soaks, l);
  return soaks;
}

// Every row of each stream over the soak, in order, each with the share of the benchmark figure its cable had when the
// row was read (1 alone; 1/2 while another cable's load shared the rails).
export function rowsOf(e: SoakLoadEvidence): Map<string, { id: LoadStreamId; gbps: number[]; share: number[] }> {
  const out = new Map<string, { id: LoadStreamId; gbps: number[]; share: number[] }>();
  for (const s of e.streams) out.set(streamKey(s), { id: s, gbps: [], share: [] });
  for (const r of e.reads) {
    const share = e.sharedWith.length && (e.sharedUntilS === null || r.tS <= e.sharedUntilS) ? 1 / (1 + e.sharedWith.length) : 1;
    for (const s of r.streams) {
      const k = streamKey(s);
      if (!out.has(k)) out.set(k, { id: { rail: s.rail, from: s.from, to: s.to }, gbps: [], share: [] });
      const row = out.get(k)!;
      row.gbps.push(...s.gbps);
      row.share.push(...s.gbps.map(() => share));
    }
  }
  return out;
}
