import type { CommandRunner } from '../transport/types.js';
import { RemoteCommandError } from '../transport/types.js';

// Fetch-then-parse for one probe: run the command on the node, refuse a non-zero exit with its evidence, parse stdout.
export async function readParsed<T>(runner: CommandRunner, command: string, parse: (text: string) => T): Promise<T> {
  const result = await runner.run(command);
  if (result.exitCode !== 0) throw new RemoteCommandError(runner.node, result);
  return parse(result.stdout);
}

// A value quoted in a ParseError reason: trimmed, cut at 60 characters, JSON-escaped so it stays on one line.
export function clip(s: string): string {
  const t = s.trim();
  return JSON.stringify(t.length > 60 ? `${t.slice(0, 57)}...` : t);
}
