// The `@@cq` framing of a tick script: one round trip per sampling tick, several commands sent as one script whose
// output is split by markers (not a `cablequal batch` campaign). Encoder and decoder for both sides: the sampler
// builds and splits, the simulated lab recognises the same script with parseTickScript() and formats its answer.

// One command of a tick script, named by the sample-set item it reads.
export interface ScriptItem {
  id: string; // [A-Za-z0-9_.:-]+
  command: string;
}

// One item's answer in a tick script's output.
export interface ScriptItemOutput {
  id: string;
  stdout: string; // stdout and stderr of the item, merged (2>&1)
  exitCode: number;
}

const MARK = '@@cq';
const ID = /^[A-Za-z0-9_.:-]+$/;

// Build the script: each item's output is framed by `@@cq <id>` and `@@cq-rc <id> <exit code>` lines.
export function buildTickScript(items: ScriptItem[]): string {
  return items
    .map(({ id, command }) => {
      if (!ID.test(id)) throw new Error(`bad batch id ${JSON.stringify(id)}`);
      if (command.includes('\n')) throw new Error(`batch command must be one line: ${id}`);
      return `echo '${MARK} ${id}'; { ${command} ; } 2>&1; echo "${MARK}-rc ${id} $?"`;
    })
    .join('; ');
}

// Recover the items from a script made by buildTickScript (null when the text is not such a script).
export function parseTickScript(script: string): ScriptItem[] | null {
  const re = new RegExp(`echo '${MARK} ([A-Za-z0-9_.:-]+)'; \\{ (.*?) ; \\} 2>&1; echo "${MARK}-rc \\1 \\$\\?"`, 'g');
  const items: ScriptItem[] = [];
  let consumed = 0;
  for (const m of script.matchAll(re)) {
    items.push({ id: m[1]!, command: m[2]! });
    consumed += m[0].length;
  }
  if (items.length === 0) return null;
  consumed += (items.length - 1) * 2; // the '; ' separators
  return consumed === script.trim().length ? items : null;
}

// Format outputs exactly as the shell would print them for buildTickScript's script.
export function formatTickScriptOutput(outputs: ScriptItemOutput[]): string {
  return outputs
    .map((o) => {
      const body = o.stdout === '' || o.stdout.endsWith('\n') ? o.stdout : `${o.stdout}\n`;
      return `${MARK} ${o.id}\n${body}${MARK}-rc ${o.id} ${o.exitCode}\n`;
    })
    .join('');
}

// Split the shell's output back into items; an item whose rc line is missing (cut-off output) gets exitCode -1.
export function splitTickScriptOutput(text: string): ScriptItemOutput[] {
  const out: ScriptItemOutput[] = [];
  let cur: { id: string; lines: string[] } | null = null;
  for (const line of text.split('\n')) {
    if (line.startsWith(`${MARK} `)) {
      if (cur) out.push({ id: cur.id, stdout: cur.lines.join('\n'), exitCode: -1 });
      cur = { id: line.slice(MARK.length + 1).trim(), lines: [] };
    } else if (line.startsWith(`${MARK}-rc `) && cur) {
      const [, id, rc] = line.split(' ');
      if (id === cur.id) {
        out.push({ id, stdout: cur.lines.length ? `${cur.lines.join('\n')}\n` : '', exitCode: Number(rc) });
        cur = null;
      } else cur.lines.push(line);
    } else if (cur) {
      cur.lines.push(line);
    }
  }
  if (cur) out.push({ id: cur.id, stdout: cur.lines.join('\n'), exitCode: -1 });
  return out;
}
