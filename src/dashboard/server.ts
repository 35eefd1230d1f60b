// `cablequal dashboard`: the lab's web page and JSON API over the results store, on node:http. Read-only (GET and
// HEAD only, nothing writes), bounded (URL length, filter values, pages of at most 500 runs, 50 live streams), and
// certificates served from the reports directory only (a path outside it, or a symlink leading outside, is refused).
import { createReadStream, readFileSync, realpathSync, statSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { basename, dirname, extname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import type { ResultsStore } from '../store/store.js';
import { CLIENT_JS } from './client-script.js';
import { cablePage, errorPage, goldenPage, livePage, partsPage, runsPage, yieldPageHtml, type CertUrl } from './pages.js';
import { BadQuery, cableHistory, facets, getRun, goldenRuns, listRuns, liveRuns, parseFilter, parsePage, partsAndVendors, yieldPage } from './queries.js';

const MAX_URL = 4096;
const MAX_SEGMENT = 200;
const MAX_STREAMS = 50;

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
  'run-report.html',
  'run-report.json',
  'summary.csv',
  'lanes.csv',
  'timeseries.csv',
  'throughput.csv',
  'batch.html',
  'batch.csv',
]);
export const JOURNAL_FILE = 'journal.jsonl';

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

  const certUrl: CertUrl = (r) => {
    if (!r.runDir || !r.certificateFile) return null;
    const rel = relative(outDir, r.runDir);
    if (rel.startsWith('..') || isAbsolute(rel)) return null;
    return `/reports/${[...rel.split(sep).filter(Boolean), r.certificateFile].map(encodeURIComponent).join('/')}`;
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
        return json(res, { ...run, certificateUrl: certUrl(run) }, head);
      }
      if (b === 'cables' && c && parts.length === 3) return json(res, await cableHistory(db, c), head);
      if (b === 'parts' && parts.length === 2) return json(res, await partsAndVendors(db), head);
      if ((b === 'parts' || b === 'vendors') && c && parts.length === 3) return json(res, await yieldPage(db, b === 'parts' ? 'part' : 'vendor', c), head);
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
    if (a === 'cables' && b && parts.length === 2) return html(res, cablePage({ serial: b, ...(await cableHistory(db, b)), certUrl }), head);
    if (a === 'parts' && parts.length === 1) return html(res, partsPage(await partsAndVendors(db)), head);
    if ((a === 'parts' || a === 'vendors') && b && parts.length === 2)
      return html(res, yieldPageHtml(await yieldPage(db, a === 'parts' ? 'part' : 'vendor', b)), head);
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

  const server = createServer((req, res) => {
    route(req, res).catch((e: unknown) => {
      const status = e instanceof HttpError ? e.status : e instanceof BadQuery ? 400 : 500;
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
  }, o.pollMs ?? 1000);
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${o.host.includes(':') ? `[${o.host}]` : o.host}:${port}/`,
    close: () =>
      new Promise<void>((done) => {
        if (poller) clearInterval(poller);
        for (const s of streams) s.end();
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}
