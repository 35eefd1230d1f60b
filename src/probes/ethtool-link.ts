// `ethtool <iface>`: negotiated speed, lanes and link state of one netdev (docs/formats.md §3).
//
// Accepted text: an optional `Settings for <if>:` first line (absent in grep'ed pastes; only permission notices may
// come before it, as 2>&1 through a pipe puts them), then `\tKey: value`
// lines (indented less than 16 columns), list continuations indented 16+ columns (ethtool uses 32), and the
// benign permission notices a non-root run interleaves (`netlink error: ...`, `Cannot get ...: ...`).
// Unknown keys are tolerated if indented as ethtool prints them (ethtool adds fields over versions); at least
// one known key must be present, keys may not repeat, and a known key with a malformed value is a ParseError.
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';
import { clip as textClip, printable } from '../domain/text.js';

const KIND = 'ethtool-link';
const HEADER = /^Settings for (\S+):$/;
const NOTICE = /^(?:netlink error: .+|Cannot get [A-Za-z -]+: .+)$/;
const KEY_LINE = /^([A-Za-z][A-Za-z0-9 /()_.,'-]*?):(?:[ \t]+(.*?))?[ \t]*$/;
// A link mode is a name from the kernel's link-mode string set, printed as it is (netlink/settings.c dump_link_modes):
// with a duplex suffix (`100000baseCR4/Full`) or without one (`10000baseR_FEC`), or `BIT<n>` for a bit this ethtool has
// no name for. The list is data: any such name is read, the ones of kernels newer than this parser too. A token
// without a digit (`N/A`) is no mode name: garbage.
const LINK_MODE = /^(?=[^\s]*\d)[A-Za-z0-9][A-Za-z0-9_/.+-]*$/;
// ethtool prints "Not reported" for an empty list (dump_link_modes's if_none).
const NOT_REPORTED = /(?:^|\s)Not reported(?=\s|$)/g;
const CONTINUATION_COLUMN = 16;

// Labels printed by ethtool's settings code (netlink and ioctl), used to tell real output from "a: b" prose.
const KNOWN_KEYS = new Set([
  'Supported ports',
  'Supported link modes',
  'Supported pause frame use',
  'Supports auto-negotiation',
  'Supported FEC modes',
  'Advertised link modes',
  'Advertised pause frame use',
  'Advertised auto-negotiation',
  'Advertised FEC modes',
  'Link partner advertised link modes',
  'Link partner advertised pause frame use',
  'Link partner advertised auto-negotiation',
  'Link partner advertised FEC modes',
  'Speed',
  'Lanes',
  'Duplex',
  'Auto-negotiation',
  'master-slave cfg',
  'master-slave status',
  'Port',
  'PHYAD',
  'Transceiver',
  'MDI-X',
  'Supports Wake-on',
  'Wake-on',
  'Current message level',
  'Link detected',
  'SQI',
  'Link Down Events',
]);
const LINK_MODE_KEYS = new Set(['Supported link modes', 'Advertised link modes', 'Link partner advertised link modes']);
// Every list ethtool may continue on the next lines (the link modes, and the FEC modes of older ethtool builds).
const LIST_KEYS = new Set([...LINK_MODE_KEYS, 'Supported FEC modes', 'Advertised FEC modes', 'Link partner advertised FEC modes']);

// The tokens of a line when each is a link mode name, else null.
function modeTokens(text: string): string[] | null {
  const tokens = text.replace(NOT_REPORTED, ' ').split(/\s+/).filter(Boolean);
  return tokens.length > 0 && tokens.every((t) => LINK_MODE.test(t)) ? tokens : null;
}

// What the harness reads from `ethtool <iface>`; null = the line was not printed (or ethtool said Unknown!).
export interface EthtoolLink {
  iface: string | null; // from `Settings for <if>:`, null in grep'ed pastes
  speedMbps: number | null;
  lanes: number | null;
  duplex: string | null;
  port: string | null;
  autoNegotiation: boolean | null;
  linkDetected: boolean | null;
  // Why the link is down, as ethtool prints it after `Link detected: no` (`Cable issue`, `Bad signal integrity, Large
  // number of physical errors`, or a bare number for a state ethtool has no name for); null when it printed none. The
  // kernel reports it only while the link is down (mlx5 en_ethtool.c, get_link_ext_state): CLUSTERS.md "In service".
  linkDownReason: string | null;
  linkDownEvents: number | null;
  // Empty when ethtool says "Not reported" or the list is not in the text (a Spark lists up to 100000baseCR4 only).
  supportedLinkModes: string[];
  // Permission notices interleaved by a non-root run (benign, kept for the record).
  notices: string[];
}

interface Field {
  key: string;
  value: string;
  line: number;
  more: { text: string; line: number }[];
}

// Pure parser for the exact output of `ethtool <iface>` (stdout, or stdout and stderr merged).
export function parseEthtoolLink(text: string): EthtoolLink {
  const lines = text.split(/\r?\n/);
  let end = lines.length;
  while (end > 0 && lines[end - 1]!.trim() === '') end--;

  let iface: string | null = null;
  const notices: string[] = [];
  const fields = new Map<string, Field>();
  let last: Field | null = null;
  for (let i = 0; i < end; i++) {
    const line = lines[i]!;
    const lineNo = i + 1;
    const header = HEADER.exec(line);
    if (header) {
      // Through a pipe (2>&1) stderr's notices come before the block-buffered stdout, so only notices may precede it.
      if (iface !== null || fields.size > 0) throw new ParseError(KIND, lineNo, `second "Settings for" header (${clip(header[1]!)}): one interface per output`);
      iface = header[1]!;
      continue;
    }
    if (NOTICE.test(line)) {
      notices.push(line);
      last = null;
      continue;
    }
    if (line.trim() === '') throw new ParseError(KIND, lineNo, 'blank line inside the settings');
    const indent = indentColumns(line);
    // ethtool continues a list with a TAB and spaces to the column after its label (dump_link_modes: "\n\t%*s");
    // a paste may have lost some of them: a line of mode names under a list is its continuation however indented.
    if (indent >= CONTINUATION_COLUMN || (last && LIST_KEYS.has(last.key) && !line.includes(':') && modeTokens(line))) {
      if (!last) throw new ParseError(KIND, lineNo, `indented continuation without a list above it: ${clip(line)}`);
      last.more.push({ text: line.trim(), line: lineNo });
      continue;
    }
    const m = KEY_LINE.exec(line.trim());
    if (!m) throw new ParseError(KIND, lineNo, `not a "Key: value" settings line: ${clip(line)}`);
    const key = m[1]!;
    // ethtool indents every setting; an unindented unknown "a: b" is prose around a paste, not a new field.
    if (indent === 0 && !KNOWN_KEYS.has(key)) throw new ParseError(KIND, lineNo, `not an ethtool setting: ${clip(line)}`);
    if (fields.has(key)) throw new ParseError(KIND, lineNo, `"${key}" repeated (first on line ${fields.get(key)!.line})`);
    last = { key, value: m[2] ?? '', line: lineNo, more: [] };
    fields.set(key, last);
  }
  if (![...fields.keys()].some((k) => KNOWN_KEYS.has(k))) {
    throw new ParseError(KIND, Math.max(1, Math.min(end, lines.length)), 'no ethtool link setting (Speed:, Link detected:, ...) found');
  }

  const read = <T>(key: string, conv: (v: string) => T | undefined, expect: string): T | null => {
    const f = fields.get(key);
    if (!f) return null;
    if (f.more.length) throw new ParseError(KIND, f.more[0]!.line, `"${key}" does not continue on a second line`);
    const v = conv(f.value);
    if (v === undefined) throw new ParseError(KIND, f.line, `${key}: ${clip(f.value)} is not ${expect}`);
    return v;
  };
  // Every link-mode list is checked, even those the result does not carry: a garbled list is garbage.
  for (const key of LINK_MODE_KEYS) linkModes(key, fields.get(key));
  return {
    iface,
    speedMbps: read('Speed', speed, 'NNNMb/s or Unknown!'),
    lanes: read('Lanes', (v) => (/^\d{1,3}$/.test(v) ? Number(v) : undefined), 'a lane count'),
    duplex: read('Duplex', (v) => (v === 'Full' || v === 'Half' ? v : /^Unknown!/.test(v) ? null : undefined), 'Full, Half or Unknown!'),
    port: read('Port', (v) => (v === '' ? undefined : /^Unknown!/.test(v) ? null : v), 'a port type'),
    autoNegotiation: read('Auto-negotiation', (v) => (v === 'on' ? true : v === 'off' ? false : undefined), 'on or off'),
    linkDetected: read('Link detected', linkDetected, 'yes or no'),
    linkDownReason: read('Link detected', linkReason, 'yes or no'),
    linkDownEvents: read('Link Down Events', (v) => (/^\d{1,10}$/.test(v) ? Number(v) : undefined), 'a count'),
    supportedLinkModes: linkModes('Supported link modes', fields.get('Supported link modes')),
    notices,
  };
}

function speed(v: string): number | null | undefined {
  if (/^Unknown!(?: \(\d+\))?$/.test(v)) return null;
  const m = /^(\d{1,9})Mb\/s$/.exec(v);
  return m ? Number(m[1]) : undefined;
}

// `yes`, `no`, or either followed by ` (<ext state>[, <ext substate>])`: ethtool netlink/settings.c,
// linkstate_link_ext_state_print (names_link_ext_state: Autoneg, Link training failure, Logical mismatch, Bad signal
// integrity, No cable, Cable issue, EEPROM issue, Calibration failure, Power budget exceeded, Overheat, Module; a state
// without a name prints its number).
const LINK_DETECTED = /^(yes|no)(?: \((.+)\))?$/;

function linkDetected(v: string): boolean | undefined {
  const m = LINK_DETECTED.exec(v);
  return m ? m[1] === 'yes' : undefined;
}

// The reason in parentheses, screened (a node's text) and cut to one short line; null when none was printed.
function linkReason(v: string): string | null | undefined {
  const m = LINK_DETECTED.exec(v);
  if (!m) return undefined;
  return m[2] === undefined ? null : textClip(printable(m[2].trim()), 120);
}

// A link-mode list: tokens on the key line and on every continuation; "Not reported" (wherever it stands) is none.
function linkModes(key: string, f: Field | undefined): string[] {
  if (!f) return [];
  const modes: string[] = [];
  for (const { text, line } of [{ text: f.value, line: f.line }, ...f.more]) {
    for (const token of text.replace(NOT_REPORTED, ' ').split(/\s+/).filter(Boolean)) {
      if (!LINK_MODE.test(token)) throw new ParseError(KIND, line, `${key}: ${clip(token)} is not a link mode`);
      modes.push(token);
    }
  }
  return modes;
}

// Columns of leading whitespace, tabs to the next multiple of 8 (how ethtool's layout is meant to be read).
function indentColumns(line: string): number {
  let col = 0;
  for (const ch of line) {
    if (ch === ' ') col++;
    else if (ch === '\t') col = col - (col % 8) + 8;
    else break;
  }
  return col;
}
