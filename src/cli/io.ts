// The CLI's streams, injected so commands can be run in-process by tests.
export interface CliIo {
  stdout: (s: string) => void;
  stderr: (s: string) => void;
  readStdin: () => Promise<string>;
  isTTY: boolean;
  cwd: string;
  env: NodeJS.ProcessEnv;
  // Aborted on Ctrl-C / SIGTERM: a run stops its loads and leaves an ABORTED record.
  signal?: AbortSignal;
}

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks).toString('utf8');
}

// The real process streams.
export function processIo(): CliIo {
  return {
    stdout: (s) => void process.stdout.write(s),
    stderr: (s) => void process.stderr.write(s),
    readStdin: () => readAll(process.stdin),
    isTTY: Boolean(process.stdout.isTTY),
    cwd: process.cwd(),
    env: process.env,
    signal: interruptSignal(),
  };
}

// First SIGINT/SIGTERM asks the run to stop cleanly; a second one exits at once.
function interruptSignal(): AbortSignal {
  const ac = new AbortController();
  const onSignal = (sig: NodeJS.Signals) => {
    if (ac.signal.aborted) process.exit(130);
    process.stderr.write(`\ncablequal: ${sig}: stopping the loads on every node (again to quit at once)\n`);
    ac.abort(`interrupted by ${sig}`);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return ac.signal;
}
