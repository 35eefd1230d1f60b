// NCCL's configuration files as `grep -H . /etc/nccl.conf ~/.nccl.conf` prints them (`<file>:<line>`). NCCL reads them
// at init (src/misc/param.cc initEnvFunc): ~/.nccl.conf (or $NCCL_CONF_FILE) first, then /etc/nccl.conf; each
// `NAME=value` line not starting with `#` becomes an environment variable unless one is already set (setenv without
// overwrite), so the process environment wins, then the user's file, then the system file, and within a file the first
// line. Some DGX OS images are reported to ship NCCL_IB_DISABLE=1 there: NCCL then runs over TCP sockets (~2 GB/s).
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

const KIND = 'nccl-conf';
const SYSTEM_FILE = '/etc/nccl.conf';
const LINE = /^(\/etc\/nccl\.conf|\/[^:]*\/\.nccl\.conf):(.*)$/;

// One `NAME=value` line of a file, as NCCL splits it (at the first `=`, nothing trimmed).
export interface NcclConfSetting {
  file: string;
  name: string;
  value: string;
}

// Parse the files' lines; comment lines and lines without `=` are skipped as NCCL skips them. Values are untrusted
// (control characters dropped, 200 characters kept).
export function parseNcclConf(text: string): NcclConfSetting[] {
  const out: NcclConfSetting[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line === '') continue;
    const m = LINE.exec(line);
    if (!m) throw new ParseError(KIND, i + 1, `not an "/etc/nccl.conf:" or "<home>/.nccl.conf:" line: ${clip(line)}`);
    const body = m[2]!;
    const eq = body.indexOf('=');
    if (body.startsWith('#') || eq < 0) continue;
    out.push({
      file: m[1]!,
      name: body.slice(0, eq),
      value: body
        .slice(eq + 1)
        .replace(/[\u0000-\u001f\u007f]/g, '')
        .slice(0, 200),
    });
  }
  return out;
}

// The line NCCL takes a variable from when the environment does not set it: the user's file before /etc/nccl.conf,
// the first line of a file before later ones; null when neither file sets it.
export function ncclConfValue(settings: readonly NcclConfSetting[], name: string): NcclConfSetting | null {
  const of = (system: boolean) => settings.find((s) => s.name === name && (s.file === SYSTEM_FILE) === system);
  return of(false) ?? of(true) ?? null;
}

// An integer parameter as NCCL reads it (strtoll with base 0: leading blanks, a sign, decimal, 0x hex or 0 octal);
// null when the text holds no number (NCCL then keeps the default).
function ncclInt(value: string): number | null {
  const m = /^\s*([+-]?)(0x[0-9a-f]+|0[0-7]*|[1-9][0-9]*)/i.exec(value);
  if (!m) return null;
  const n = Number.parseInt(m[2]!, /^0x/i.test(m[2]!) ? 16 : m[2]!.length > 1 && m[2]!.startsWith('0') ? 8 : 10);
  return m[1] === '-' ? -n : n;
}

// What a file setting does to a NCCL run over the cable's RDMA devices: a line that turns InfiniBand/RoCE off
// (NCCL_IB_DISABLE non-zero) or picks another network (NCCL_NET other than IB), unless the launcher sets that
// variable for the rank itself (`overridden`: the names its `-x NAME[=value]` options set).
export function ncclConfProblems(settings: readonly NcclConfSetting[], overridden: ReadonlySet<string>): { setting: NcclConfSetting; effect: string }[] {
  const problems: { setting: NcclConfSetting; effect: string }[] = [];
  const ib = overridden.has('NCCL_IB_DISABLE') ? null : ncclConfValue(settings, 'NCCL_IB_DISABLE');
  const n = ib ? ncclInt(ib.value) : null;
  if (ib && n !== null && n !== 0) problems.push({ setting: ib, effect: 'NCCL would not use the RDMA devices and would run over TCP sockets (~2 GB/s)' });
  const net = overridden.has('NCCL_NET') ? null : ncclConfValue(settings, 'NCCL_NET');
  if (net && net.value !== '' && !/^IB$/i.test(net.value))
    problems.push({ setting: net, effect: `NCCL would use the "${net.value}" network instead of IB (RoCE over the cable)` });
  return problems;
}
