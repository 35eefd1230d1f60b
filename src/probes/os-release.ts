// What OS a node runs: DGX OS from /etc/dgx-release (DGX_* keys), Ubuntu's /etc/os-release as the fallback, read
// together with `grep -H . /etc/dgx-release /etc/os-release` (KEY=value or KEY="value" lines, path-prefixed).
import { ParseError } from '../domain/errors.js';
import { clip } from './read.js';

const KIND = 'os-release';
const LINE = /^(\/etc\/dgx-release|\/etc\/os-release):(.*)$/;
// The keys read; /etc/dgx-release also carries DGX_SERIAL_NUMBER, which is never kept.
const DGX_KEYS = ['DGX_NAME', 'DGX_PRETTY_NAME', 'DGX_SWBUILD_VERSION', 'DGX_OTA_VERSION', 'DGX_PLATFORM'] as const;
const OS_KEYS = ['PRETTY_NAME', 'NAME', 'VERSION_ID', 'ID'] as const;

export interface OsRelease {
  dgx: Partial<Record<(typeof DGX_KEYS)[number], string>> | null;
  os: Partial<Record<(typeof OS_KEYS)[number], string>> | null;
}

// Parse the two files' lines; values are untrusted (quotes removed, control characters dropped, 128 characters kept).
export function parseOsRelease(text: string): OsRelease {
  const out: OsRelease = { dgx: null, os: null };
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const m = LINE.exec(line);
    if (!m) throw new ParseError(KIND, i + 1, `not an "/etc/dgx-release:" or "/etc/os-release:" line: ${clip(line)}`);
    const kv = /^\s*([A-Z0-9_]+)=(.*)$/.exec(m[2]!);
    if (!kv) continue; // a comment or blank line of the file
    const value = kv[2]!
      .trim()
      .replace(/^"(.*)"$/, '$1')
      .replace(/^'(.*)'$/, '$1')
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .slice(0, 128);
    if (value === '') continue;
    if (m[1] === '/etc/dgx-release' && (DGX_KEYS as readonly string[]).includes(kv[1]!)) (out.dgx ??= {})[kv[1] as (typeof DGX_KEYS)[number]] = value;
    if (m[1] === '/etc/os-release' && (OS_KEYS as readonly string[]).includes(kv[1]!)) (out.os ??= {})[kv[1] as (typeof OS_KEYS)[number]] = value;
  }
  return out;
}

// One line for the record: "NVIDIA DGX Spark, DGX OS 7.5.0 (installed 7.2.3); Ubuntu 24.04.3 LTS", or the OS alone.
export function osReleaseText(r: OsRelease): string | null {
  const parts: string[] = [];
  if (r.dgx) {
    const name = r.dgx.DGX_PRETTY_NAME ?? r.dgx.DGX_NAME ?? 'DGX';
    const now = r.dgx.DGX_OTA_VERSION ?? r.dgx.DGX_SWBUILD_VERSION;
    const installed =
      r.dgx.DGX_OTA_VERSION && r.dgx.DGX_SWBUILD_VERSION && r.dgx.DGX_SWBUILD_VERSION !== r.dgx.DGX_OTA_VERSION
        ? ` (installed ${r.dgx.DGX_SWBUILD_VERSION})`
        : '';
    parts.push(`${name}, DGX OS ${now ?? 'version unknown'}${installed}`);
  }
  if (r.os) {
    const os = r.os.PRETTY_NAME ?? [r.os.NAME, r.os.VERSION_ID].filter(Boolean).join(' ');
    if (os) parts.push(os);
  }
  return parts.length ? parts.join('; ') : null;
}
