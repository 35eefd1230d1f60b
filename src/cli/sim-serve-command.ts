import { resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { ensureDir } from '../io/ensure-dir.js';
import { serveSimLab } from '../sim/serve.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';
import { SPEED } from './options.js';

// `cablequal sim serve`: both simulated nodes as SSH servers on loopback until Ctrl-C.
export async function simServeCommand(
  args: { scenario: string; faults: string[]; port: number; speed: number; dir: string; seed?: number },
  io: CliIo,
): Promise<number> {
  if (!(Number.isFinite(args.speed) && args.speed >= SPEED.min && args.speed <= SPEED.max))
    throw new UsageError(`--speed: expected a speed-up factor from ${SPEED.min} to ${SPEED.max}, got ${args.speed}`);
  const dir = ensureDir(resolve(io.cwd, args.dir), '--dir');
  let lab: Awaited<ReturnType<typeof serveSimLab>>;
  try {
    lab = await serveSimLab({
      scenario: args.scenario,
      faults: args.faults,
      speed: args.speed,
      dir,
      basePort: args.port,
      ...(args.seed !== undefined ? { seed: args.seed } : {}),
    });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL')
      throw new UsageError(`--port ${args.port}: cannot listen on 127.0.0.1 (${code}); choose another port or 0 for free ones`);
    throw e;
  }
  io.stdout(`simulated lab "${args.scenario}" (generated outputs, not recordings), speed x${args.speed}, seed ${lab.lab.seed}\n`);
  for (const n of lab.nodes)
    io.stdout(`  ${n.name}: ssh -p ${n.port} -i ${lab.files.privateKey} -o UserKnownHostsFile=${lab.files.knownHosts} ${n.user}@127.0.0.1\n`);
  io.stdout(
    `  both nodes: cablequal run --nodes ${lab.nodes.map((n) => n.name).join(',')} --ssh-config ${lab.files.config}${args.speed !== 1 ? ` --speed ${args.speed}` : ''}\n`,
  );
  io.stdout('Ctrl-C to stop.\n');
  await new Promise<void>((done) => {
    if (!io.signal) return done();
    if (io.signal.aborted) return done();
    io.signal.addEventListener('abort', () => done(), { once: true });
  });
  await lab.close();
  return EXIT.ok;
}
