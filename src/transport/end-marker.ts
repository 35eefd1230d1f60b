// The `@@cq-end` framing of LocalRunner's persistent /bin/sh: each command is followed by a random end marker on
// both streams, the one on stdout carrying the exit code; a command given stdin reads it from a here-document
// closed by the same marker. Encoder and decoder together.
import { randomBytes } from 'node:crypto';
import { shellQuote } from './commands.js';

// A fresh marker per command, so no output can end the frame early.
export function newEndMark(): string {
  return `@@cq-end-${randomBytes(8).toString('hex')}`;
}

// The script line(s) that run `command` in the shell and print the end markers after it.
export function buildEndMarked(mark: string, command: string, stdin?: string): string {
  const trailer = `printf '\\n%s %s\\n' '${mark}' "$?"; printf '\\n%s\\n' '${mark}' >&2`;
  if (stdin === undefined) return `command eval ${shellQuote(command)} </dev/null; ${trailer}\n`;
  const body = stdin === '' || stdin.endsWith('\n') ? stdin : `${stdin}\n`;
  return `command eval ${shellQuote(command)} <<'${mark}-in'; ${trailer}\n${body}${mark}-in\n`;
}

// The command's output once both end markers arrived, else null.
export function takeEndMarked(mark: string, out: string, err: string): { stdout: string; stderr: string; exitCode: number } | null {
  const mo = new RegExp(`\\n${mark} (\\d+)\\n`).exec(out);
  const ie = err.indexOf(`\n${mark}\n`);
  if (!mo || ie < 0) return null;
  return { stdout: out.slice(0, mo.index), stderr: err.slice(0, ie), exitCode: Number(mo[1]) };
}
