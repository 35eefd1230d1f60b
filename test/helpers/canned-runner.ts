// A CommandRunner for the probes' read*() functions: every run() gets a canned answer and is recorded in `seen`;
// the other methods are not used by a single read and throw.
import type { CommandResult, CommandRunner } from '../../src/transport/types.js';

export function cannedRunner(
  answer: Partial<CommandResult> | ((command: string) => Partial<CommandResult> | undefined),
  seen: string[] = [],
  node = 'spark-a',
): CommandRunner {
  return {
    node,
    simulated: true,
    run: async (command) => {
      seen.push(command);
      const a = typeof answer === 'function' ? answer(command) : answer;
      return { command, stdout: '', stderr: '', exitCode: 0, signal: null, durationMs: 1, ...a };
    },
    start: async () => {
      throw new Error('unused');
    },
    openShell: async () => {
      throw new Error('unused');
    },
    close: async () => {},
  };
}
