// `cablequal dashboard`: the lab's web page and JSON API over the results store, on node:http. Read-only (GET and
// HEAD only, nothing writes), bounded (URL length, filter values, pages of at most 500 runs, 50 live streams), and
// certificates served from the reports directory only (a path outside it, or a symlink leading outside, is refused).
import { serviceOfCable, watchedCables } from '../store/service.js';
import { fleetPage, serviceSection } from './service-page.js';
import { createReadStream, existsSync, readdirSync, readFileSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { UsageError } from '../domain/errors.js';
import type { ResultsStore } from '../store/store.js';
import { CLIENT_JS } from './client-script.js';
import { batchesPage, batchPage, cablePage, errorPage, goldenPage, livePage, partsPage, runsPage, yieldPageHtml, type CertUrl } from './pages.js';
import {
  BadQuery,
  batches,
  batchOf,
  cableHistory,
  facets,
  getRun,
  goldenRuns,
  listRuns,
  liveOf,
  liveRuns,
  parseFilter,
  parsePage,
  parseScope,
  partsAndVendors,
  runState,
  yieldPage,
  type RunItem,
} from './queries.js';
import { runPage } from './run-page.js';
import { SeriesCache } from './run-series.js';

const MAX_URL = 4096;
const MAX_SEGMENT = 200;
const MAX_STREAMS = 50;
const SERIES_EVERY_MS = 3000; // a running run's page gets its series again at most this often

export interface DashboardOptions {
  store: ResultsStore;
  outDir: string; // the reports directory: certificates are served from here only
  port: number;
  host: string;
  pollMs?: number; // how often live streams look at the store (default 1 s)
  serveJournals?: boolean; // also serve each run's journal.jsonl (--serve-journals); never the database or run.log
}

export interface Dashboard {
  url: string;
  port: number;
  close(): Promise<void>;
}

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.json': 'application/json',
  '.csv': 'text/csv; charset=utf-8',
  '.jsonl': 'text/plain; charset=utf-8',
};

// The files of the reports directory a person opens: certificates, run reports, the CSVs, a batch's summary. Nothing
// else is served: not the store (cablequal.db), not run.log or record.json, and journal.jsonl only with --serve-journals.
export const SERVED_REPORTS: ReadonlySet<string> = new Set([
  'certificate.html',
  'certificate.json',
  'setup-check.html',
  'setup-check.json',
  'run-report.html',
  'run-report.json',
  'summary.csv',
  'lanes.csv',
  'timeseries.csv',
  'throughput.csv',
  'batch.html',
  'batch.csv',
]);
// A run's journal: served only with --serve-journals, read for the run page's series.
export const JOURNAL_FILE = 'journal.jsonl';
// The files a run page links, in this order, when they are there: the served ones but a batch's.
const RUN_FILES = [...SERVED_REPORTS].filter((f) => !f.startsWith('batch.'));

// The page's own script and uPlot's files from node_modules: the dashboard needs no network to draw.
function staticFiles(): Map<string, { type: string; body: Buffer }> {
  const uplotDir = join(dirname(createRequire(import.meta.url).resolve('uplot/package.json')), 'dist');
  return new Map([
    ['/static/uPlot.iife.min.js', { type: 'text/javascript; charset=utf-8', body: readFileSync(join(uplotDir, 'uPlot.iife.min.js')) }],
    ['/static/uPlot.min.css', { type: 'text/css; charset=utf-8', body: readFileSync(join(uplotDir, 'uPlot.min.css')) }],
    ['/static/dashboard.js', { type: 'text/javascript; charset=utf-8', body: Buffer.from(CLIENT_JS) }],
  ]);
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

// Start serving; resolves once listening (a port in use is an error naming it).
export async function startDashboard(o: DashboardOptions): Promise<Dashboard> {
  const db = o.store.db;
  const outDir = resolve(o.outDir);
  const statics = staticFiles();
  const streams = new Set<ServerResponse>();
  let lastLive = '';
  let poller: NodeJS.Timeout | null = null;
  let polling = false;

  const series = new SeriesCache();
  // Where a file of a run directory under --out is served (null: the directory is elsewhere, on another controller).
  const reportUrl = (runDir: string | null, file: string): string | null => {
    if (!runDir) return null;
    const rel = relative(outDir, runDir);
    if (rel.startsWith('..') || isAbsolute(rel)) return null;
    return `/reports/${[...rel.split(sep).filter(Boolean), file].map(encodeURIComponent).join('/')}`;
  };
  const certUrl: CertUrl = (r) => (r.certificateFile ? reportUrl(r.runDir, r.certificateFile) : null);

  // A run's journal when it is under --out on this controller: its run directory, or (a running run, whose row does
  // not know its directory yet) <out>/<label or serial>/<run id> or <out>/<batch>/runs/<label>/<run id>.
  const found = new Map<string, string>();
  const journalOf = (r: Pick<RunItem, 'runId' | 'runDir' | 'state'>): string | null => {
    const inside = (dir: string) => {
      const j = join(dir, JOURNAL_FILE);
      if (!SeriesCache.exists(j)) return null;
      try {
        return realpathSync(j).startsWith(realpathSync(outDir) + sep) ? j : null;
      } catch {
        return null;
      }
    };
    if (r.runDir && reportUrl(r.runDir, JOURNAL_FILE)) return inside(r.runDir);
    if (r.state !== 'running' || r.runId.includes('/') || r.runId.includes('\\') || r.runId.startsWith('.')) return null;
    const known = found.get(r.runId);
    if (known && inside(known)) return join(known, JOURNAL_FILE);
    const dirsOf = (d: string) => {
      try {
        return readdirSync(d, { withFileTypes: true })
          .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
          .map((e) => join(d, e.name));
      } catch {
        return [];
      }
    };
    for (const top of dirsOf(outDir)) {
      for (const dir of [join(top, r.runId), ...(existsSync(join(top, 'runs')) ? dirsOf(join(top, 'runs')).map((l) => join(l, r.runId)) : [])]) {
        const j = inside(dir);
        if (j) {
          found.set(r.runId, dir);
          return j;
        }
      }
    }
    return null;
  };

  const pollLive = async () => {
    if (polling) return;
    polling = true;
    try {
      const text = JSON.stringify(await liveRuns(db));
      if (text !== lastLive) {
        lastLive = text;
        for (const res of streams) res.write(`event: live\ndata: ${text}\n\n`);
      }
    } catch {
      // the store is unreachable for a moment: the streams keep their last state and the next poll tries again
    } finally {
      polling = false;
    }
  };

  const send = (res: ServerResponse, status: number, type: string, body: string | Buffer, head: boolean, extra: Record<string, string> = {}) => {
    res.writeHead(status, {
      'content-type': type,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
      ...extra,
    });
    res.end(head ? undefined : body);
  };
  const PAGE_CSP =
    "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; connect-src 'self'; img-src 'self' data:; form-action 'self'; base-uri 'none'; frame-ancestors 'none'";
  const html = (res: ServerResponse, body: string, head: boolean, status = 200) =>
    send(res, status, 'text/html; charset=utf-8', body, head, { 'content-security-policy': PAGE_CSP });
  const json = (res: ServerResponse, value: unknown, head: boolean, status = 200) => send(res, status, 'application/json', `${JSON.stringify(value)}\n`, head);

  const serveReport = (res: ServerResponse, parts: string[], head: boolean) => {
    const rel = parts.join('/');
    if (!rel || rel.includes('\0') || parts.some((p) => p === '..' || p === '.' || p.includes('/') || p.includes('\\'))) throw new HttpError(400, 'bad path');
    const name = parts.at(-1)!;
    if (!SERVED_REPORTS.has(name) && !(o.serveJournals && name === JOURNAL_FILE))
      throw new HttpError(
        403,
        name === JOURNAL_FILE
          ? 'journals are served only when the dashboard runs with --serve-journals'
          : `not served: the dashboard serves certificates, run reports and CSVs only (${[...SERVED_REPORTS].join(', ')})`,
      );
    const full = resolve(outDir, ...parts);
    let real: string;
    let realRoot: string;
    try {
      real = realpathSync(full);
      realRoot = realpathSync(outDir);
    } catch {
      throw new HttpError(404, `not found: ${rel}`);
    }
    if (!real.startsWith(realRoot + sep)) throw new HttpError(403, 'outside the reports directory');
    // A link named certificate.html that leads to the store or a log is refused too: the target's name must be served.
    if (basename(real) !== name) throw new HttpError(403, `not served: ${rel} is a link to another file`);
    const st = statSync(real);
    if (!st.isFile()) throw new HttpError(404, `not a file: ${rel}`);
    res.writeHead(200, {
      'content-type': TYPES[extname(real).toLowerCase()] ?? 'application/octet-stream',
      'content-length': String(st.size),
      'x-content-type-options': 'nosniff',
      // Certificates are self-contained (inline CSS and SVG): nothing else may load or run in them.
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; img-src data:; sandbox",
    });
    if (head) res.end();
    else createReadStream(real).pipe(res);
  };

  const route = async (req: IncomingMessage, res: ServerResponse) => {
    const head = req.method === 'HEAD';
    if (req.method !== 'GET' && !head) {
      res.writeHead(405, { allow: 'GET, HEAD' }).end('read-only: GET and HEAD only\n');
      return;
    }
    if ((req.url ?? '').length > MAX_URL) throw new HttpError(414, `URL longer than ${MAX_URL} characters`);
    const url = new URL(req.url ?? '/', 'http://dashboard');
    let parts: string[];
    try {
      parts = url.pathname.split('/').filter(Boolean).map(decodeURIComponent);
    } catch {
      throw new HttpError(400, 'bad percent-encoding in the path');
    }
    if (parts.some((p) => p.length > MAX_SEGMENT)) throw new HttpError(414, `path segment longer than ${MAX_SEGMENT} characters`);
    const q = url.searchParams;
    const [a, b, c] = parts;
    const stat = statics.get(url.pathname);
    if (stat) return send(res, 200, stat.type, stat.body, head, { 'cache-control': 'max-age=3600' });
    if (a === 'reports') return serveReport(res, parts.slice(1), head);
    if (a === 'api') {
      if (b === 'runs' && parts.length === 2) return json(res, await listRuns(db, parseFilter(q), parsePage(q)), head);
      if (b === 'runs' && c && parts.length === 3) {
        const run = await getRun(db, c);
        if (!run) throw new HttpError(404, `no run ${c}`);
        return json(res, { ...run, certificateUrl: certUrl(run), seriesUrl: journalOf(run) ? `/api/runs/${encodeURIComponent(c)}/series` : null }, head);
      }
      if (b === 'runs' && c && parts[3] === 'series' && parts.length === 4) {
        const run = await getRun(db, c);
        if (!run) throw new HttpError(404, `no run ${c}`);
        const j = journalOf(run);
        if (!j) throw new HttpError(404, `run ${c}: its journal is not under this dashboard's reports directory`);
        return json(res, await series.series(c, j), head);
      }
      if (b === 'runs' && c && parts[3] === 'stream' && parts.length === 4) return openRunStream(res, c);
      if (b === 'cables' && c && parts.length === 3) return json(res, await cableHistory(db, c), head);
      if (b === 'cables' && c && parts[3] === 'service' && parts.length === 4) return json(res, await serviceOfCable(db, c), head);
      if (b === 'fleet' && parts.length === 2) return json(res, await watchedCables(db), head);
      if (b === 'parts' && parts.length === 2) return json(res, await partsAndVendors(db, parseScope(q)), head);
      if ((b === 'parts' || b === 'vendors') && c && parts.length === 3)
        return json(res, await yieldPage(db, b === 'parts' ? 'part' : 'vendor', c, parseScope(q)), head);
      if (b === 'batches' && parts.length === 2) return json(res, await batches(db), head);
      if (b === 'batches' && c && parts.length === 3) return json(res, await batchOf(db, c), head);
      if (b === 'golden' && parts.length === 2) return json(res, await goldenRuns(db), head);
      if (b === 'live' && parts.length === 2) return json(res, await liveRuns(db), head);
      if (b === 'live' && c === 'stream' && parts.length === 3) return openStream(res);
      throw new HttpError(404, `no API ${url.pathname}`);
    }
    if (parts.length === 0) {
      const filter = parseFilter(q);
      const page = parsePage(q);
      const [list, f] = await Promise.all([listRuns(db, filter, page), facets(db)]);
      return html(res, runsPage({ filter, page, total: list.total, runs: list.runs, facets: f, certUrl }), head);
    }
    if (a === 'cables' && b && parts.length === 2)
      return html(res, cablePage({ serial: b, ...(await cableHistory(db, b)), certUrl, service: serviceSection(await serviceOfCable(db, b)) }), head);
    if (a === 'fleet' && parts.length === 1) return html(res, fleetPage(await watchedCables(db)), head);
    if (a === 'runs' && b && parts.length === 2) {
      const run = await getRun(db, b);
      if (!run) throw new HttpError(404, `no run ${b}`);
      const j = journalOf(run);
      const dir = run.runDir ?? (j ? dirname(j) : null);
      const files = dir ? RUN_FILES.filter((f) => existsSync(join(dir, f))) : [];
      if (o.serveJournals && j) files.push(JOURNAL_FILE);
      const links = files.map((f) => ({ label: f, url: reportUrl(dir, f) })).filter((l): l is { label: string; url: string } => l.url !== null);
      const live = run.state === 'running' ? await liveOf(db, b) : null;
      const note = run.runDir
        ? `its journal (${run.runDir}) is not under this dashboard's reports directory (--out ${outDir})`
        : run.state === 'running'
          ? `its journal was not found under --out ${outDir} (a run on another controller?)`
          : 'the store does not know its run directory';
      // A running run's page asks for its series even before its journal is found: its stream sends them once it is.
      const seriesUrl = j || run.state === 'running' ? `/api/runs/${encodeURIComponent(b)}/series` : null;
      return html(res, runPage({ run, live, links, seriesUrl, journalNote: j ? null : note }), head);
    }
    if (a === 'batches' && parts.length === 1) return html(res, batchesPage(await batches(db)), head);
    if (a === 'batches' && b && parts.length === 2) return html(res, batchPage({ id: b, ...(await batchOf(db, b)), certUrl }), head);
    if (a === 'parts' && parts.length === 1) return html(res, partsPage(await partsAndVendors(db, parseScope(q))), head);
    if ((a === 'parts' || a === 'vendors') && b && parts.length === 2)
      return html(res, yieldPageHtml(await yieldPage(db, a === 'parts' ? 'part' : 'vendor', b, parseScope(q))), head);
    if (a === 'golden' && parts.length === 1) return html(res, goldenPage(await goldenRuns(db), certUrl), head);
    if (a === 'live' && parts.length === 1) return html(res, livePage(await liveRuns(db)), head);
    throw new HttpError(404, `no page ${url.pathname}`);
  };

  const openStream = async (res: ServerResponse) => {
    if (streams.size >= MAX_STREAMS) throw new HttpError(503, `at most ${MAX_STREAMS} live streams at once`);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive', 'x-content-type-options': 'nosniff' });
    res.write('retry: 2000\n\n');
    streams.add(res);
    res.on('close', () => streams.delete(res));
    const text = JSON.stringify(await liveRuns(db));
    res.write(`event: live\ndata: ${text}\n\n`);
  };

  // A run page's stream: the run's series whenever its journal grew, its live status whenever it changed, and
  // `finished` once the store has its record (the page then reloads as a finished run's page).
  const runStreams = new Map<ServerResponse, { runId: string; size: number; status: string; sentMs: number }>();
  const pollRun = async (res: ServerResponse, st: { runId: string; size: number; status: string; sentMs: number }) => {
    const state = await runState(db, st.runId);
    if (state !== 'running') {
      res.write(`event: finished\ndata: ${JSON.stringify({ state })}\n\n`);
      return void res.end();
    }
    const status = JSON.stringify(await liveOf(db, st.runId));
    if (status !== st.status) {
      st.status = status;
      res.write(`event: status\ndata: ${status}\n\n`);
    }
    const j = journalOf({ runId: st.runId, runDir: null, state: 'running' });
    const size = j ? (statSync(j, { throwIfNoEntry: false })?.size ?? 0) : 0;
    // The whole (downsampled) series again, at most every SERIES_EVERY_MS: a browser redraws it, nothing is appended.
    if (j && size !== st.size && Date.now() - st.sentMs >= SERIES_EVERY_MS) {
      st.size = size;
      st.sentMs = Date.now();
      res.write(`event: series\ndata: ${JSON.stringify(await series.series(st.runId, j))}\n\n`);
    }
  };
  const openRunStream = async (res: ServerResponse, runId: string) => {
    if (streams.size + runStreams.size >= MAX_STREAMS) throw new HttpError(503, `at most ${MAX_STREAMS} live streams at once`);
    if ((await runState(db, runId)) === null) throw new HttpError(404, `no run ${runId}`);
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store', connection: 'keep-alive', 'x-content-type-options': 'nosniff' });
    res.write('retry: 2000\n\n');
    const st = { runId, size: -1, status: '', sentMs: 0 };
    runStreams.set(res, st);
    res.on('close', () => runStreams.delete(res));
    await pollRun(res, st);
  };
  let runPolling = false;
  const pollRuns = async () => {
    if (runPolling) return;
    runPolling = true;
    try {
      for (const [res, st] of runStreams) await pollRun(res, st).catch(() => undefined);
    } finally {
      runPolling = false;
    }
  };

  const server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      // A journal that is not a regular file, or over the journal bound (io/read-input.ts): refused, naming it.
      const status = e instanceof HttpError ? e.status : e instanceof BadQuery ? 400 : e instanceof UsageError ? 422 : 500;
      const message = (e as Error).message;
      if (status === 500) process.stderr.write(`cablequal dashboard: ${req.url}: ${message}\n`);
      if (res.headersSent) return void res.end();
      const api = (req.url ?? '').startsWith('/api/');
      if (api) json(res, { error: message }, req.method === 'HEAD', status);
      else html(res, errorPage(status, message), req.method === 'HEAD', status);
    });
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolveListen, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolveListen());
  });
  poller = setInterval(() => {
    if (streams.size) void pollLive();
    if (runStreams.size) void pollRuns();
  }, o.pollMs ?? 1000);
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}/`,
    close: () =>
      new Promise<void>((done) => {
        if (poller) clearInterval(poller);
        for (const s of streams) s.end();
        for (const s of runStreams.keys()) s.end();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
