// Hosts that accept TCP but do not speak SSH, on 127.0.0.1: one silent (a firewall, a wrong port, a hung sshd), one
// that answers with garbage. For ssh-silent-host.test.ts (the runner) and its .system twin (the real CLI).
import { createServer, type Server, type Socket } from 'node:net';

export interface QuietHost {
  server: Server;
  port: number;
  sockets: Set<Socket>;
}

const GARBAGE = `HTTP/1.1 400 Bad Request\r\n\r\n${'\u0000\u00ff'.repeat(300)}\r\nSSH-1.0-not-really\r\n`;

// A TCP server that accepts and then stays silent, or writes `greeting` and stays open.
function listen(greeting: string | null): Promise<QuietHost> {
  const sockets = new Set<Socket>();
  const server = createServer((s) => {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => sockets.delete(s));
    if (greeting !== null) s.write(greeting);
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve({ server, port: (server.address() as { port: number }).port, sockets })));
}

// Both hosts listening; close() drops their connections and stops them.
export async function startQuietHosts(): Promise<{ silent: QuietHost; garbage: QuietHost; close(): Promise<void> }> {
  const silent = await listen(null);
  const garbage = await listen(GARBAGE);
  return {
    silent,
    garbage,
    async close() {
      for (const s of [silent, garbage]) {
        for (const c of s.sockets) c.destroy();
        await new Promise((r) => s.server.close(r));
      }
    },
  };
}
