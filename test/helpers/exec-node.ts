// A node process run to its end from a test: its exit code (0 when it succeeded) and output, never a throw.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

// `node <args>`, as execFile options say.
export async function execNode(args: string[], opts: { cwd: string; env?: NodeJS.ProcessEnv }): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const r = await promisify(execFile)(process.execPath, args, opts);
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (e) {
    const err = e as { code: number; stdout: string; stderr: string };
    return { code: err.code, stdout: err.stdout, stderr: err.stderr };
  }
}
