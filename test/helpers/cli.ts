import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';

// Run the CLI in-process: captures stdout, stderr and the exit code.
export async function runCli(
  argv: string[],
  opts: { stdin?: string; cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const io: CliIo = {
    stdout: (s) => void (out += s),
    stderr: (s) => void (err += s),
    readStdin: async () => opts.stdin ?? '',
    isTTY: false,
    cwd: opts.cwd ?? process.cwd(),
    env: opts.env ?? {},
  };
  const code = await main(argv, io);
  return { code, out, err };
}
