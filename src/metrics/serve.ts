// `--metrics-port N`: GET /metrics in Prometheus text (or OpenMetrics when the scraper asks for it), on 127.0.0.1
// unless told otherwise. Nothing else is served.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UsageError } from '../domain/errors.js';
import type { RunMetrics } from './run-metrics.js';

export interface MetricsServer {
  url: string;
  port: number;
  close(): Promise<void>;
}

// Listen, or a one-line usage error (port in use, address not on this machine).
export async function serveMetrics(metrics: Pick<RunMetrics, 'prometheus' | 'openMetrics'>, o: { port: number; host?: string }): Promise<MetricsServer> {
  const host = o.host ?? '127.0.0.1';
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.writeHead(405, { allow: 'GET, HEAD' }).end();
      return;
    }
    if (path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    const open = /application\/openmetrics-text/.test(req.headers.accept ?? '');
    const registry = open ? metrics.openMetrics : metrics.prometheus;
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? undefined : text),
      (e: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${(e as Error).message}\n`),
    );
  });
  server.keepAliveTimeout = 5000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', (e: NodeJS.ErrnoException) => reject(new UsageError(`--metrics-port ${o.port}: cannot listen on ${host} (${e.code ?? e.message})`)));
    server.listen(o.port, host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    port,
    url: `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
