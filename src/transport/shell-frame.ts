// The `@@cqsh` framing of the persistent SSH shell: one line per command, whose output comes back between begin and
// end markers on both streams, the end marker on stdout carrying the exit code. The controller's side (SshRunner:
// buildShellFrame, takeShellFrame) and the shell's side (the simulated lab's SSH server: parseShellFrame,
// formatShellFrame) are here together so that they cannot drift apart.

const FRAME_MARK = /^@@cqsh-[0-9a-f]+-\d+$/;

// One line: begin markers on both streams, the command with stdin closed, end markers carrying the exit code.
export function buildShellFrame(marker: string, command: string): string {
  if (!FRAME_MARK.test(marker)) throw new Error(`bad frame marker ${marker}`);
  return `printf '%s\\n' '${marker}-b'; printf '%s\\n' '${marker}-b' >&2; { ${command} ; } < /dev/null; __cq=$?; printf '\\n%s %s\\n' '${marker}-e' "$__cq"; printf '\\n%s\\n' '${marker}-e' >&2`;
}

// Recognise a frame line (null for anything else).
export function parseShellFrame(line: string): { marker: string; command: string } | null {
  const m =
    /^printf '%s\\n' '(@@cqsh-[0-9a-f]+-\d+)-b'; printf '%s\\n' '\1-b' >&2; \{ (.*) ; \} < \/dev\/null; __cq=\$\?; printf '\\n%s %s\\n' '\1-e' "\$__cq"; printf '\\n%s\\n' '\1-e' >&2$/.exec(
      line,
    );
  return m ? { marker: m[1]!, command: m[2]! } : null;
}

// What a shell prints for a frame line (the server side of the framing).
export function formatShellFrame(marker: string, r: { stdout: string; stderr: string; exitCode: number | null }) {
  return {
    stdout: `${marker}-b\n${r.stdout}\n${marker}-e ${r.exitCode ?? 255}\n`,
    stderr: `${marker}-b\n${r.stderr}\n${marker}-e\n`,
  };
}

// Pull one framed result out of the accumulated streams; null while incomplete.
export function takeShellFrame(marker: string, out: string, err: string) {
  const ob = out.indexOf(`${marker}-b\n`);
  if (ob < 0) return null;
  const endRe = new RegExp(`\\n${marker}-e (\\d+)\\n`);
  const rest = out.slice(ob + marker.length + 3);
  const oe = endRe.exec(rest);
  if (!oe) return null;
  const eb = err.indexOf(`${marker}-b\n`);
  const eend = err.indexOf(`\n${marker}-e\n`, Math.max(0, eb));
  if (eb < 0 || eend < 0) return null;
  return {
    stdout: rest.slice(0, oe.index),
    stderr: err.slice(eb + marker.length + 3, eend),
    exitCode: Number(oe[1]),
    restOut: rest.slice(oe.index + oe[0].length),
    restErr: err.slice(eend + marker.length + 4),
  };
}
