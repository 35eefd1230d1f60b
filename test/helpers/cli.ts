import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

// Run the CLI in-process: captures stdout, stderr and the exit code.
export async function runCli(
  argv: string[],
  // tty: run as on a terminal of that width (the live status line is drawn).
  // signal: what Ctrl-C would abort (a dashboard serves until it fires).
  opts: { stdin?: string; cwd?: string; env?: NodeJS.ProcessEnv; tty?: { columns: number }; signal?: AbortSignal } = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: async () => opts.stdin ?? '',
    isTTY: opts.tty !== undefined,
    ...(opts.tty ? { columns: () => opts.tty!.columns } : {}),
    cwd: opts.cwd ?? process.cwd(),
    env: opts.env ?? {},
    ...(opts.signal ? { signal: opts.signal } : {}),
  };
  const code = await main(argv, io);
  return { code, out, err };
}
