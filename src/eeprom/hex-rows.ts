import { ParseError } from '../domain/errors.js';
import { hex2 } from './bytes.js';

// Bytes recovered from one or more `ethtool -m ... hex on` dumps, at their absolute offsets.
export interface HexDump {
  bytes: Array<number | undefined>;
  bytesRead: number;
  dumps: number;
}

// ethtool never prints more than the 640-byte legacy SFF-8636 dump; anything far beyond is not a module read.
const MAX_OFFSET = 0x1000;

const FAILED_READ = /netlink warning|query module eeprom/i;
const HEADER = /^Offset\s+Values$/;
const RULE = /^-{6}\s+-{6}$/;
const ROW = /^0x([0-9a-fA-F]{4,8}):(.*)$/;

// Failed mlx5 reads print `netlink warning: ... Query module eeprom ... failed` and then garbage: never decode those.
export function assertNotFailedRead(text: string, kind: string): void {
  const lines = text.split('\n');
  const i = lines.findIndex((l) => FAILED_READ.test(l));
  if (i >= 0) throw new ParseError(kind, i + 1, `failed module EEPROM read: ${lines[i]!.trim().slice(0, 120)}`);
}

// Strictly read `Offset/Values` dumps (rows `0x%04x:` + up to 16 bytes); concatenated dumps must agree where they overlap.
export function readHexDump(text: string, kind = 'eeprom-hex'): HexDump {
  assertNotFailedRead(text, kind);
  const bytes: Array<number | undefined> = [];
  let bytesRead = 0;
  let dumps = 0;
  let state: 'outside' | 'header' | 'rows' = 'outside';
  let next = -1; // offset the next row of this dump must start at; -1 = first row, -2 = a short row ended the dump
  const lines = text.split('\n');
  for (let n = 0; n < lines.length; n++) {
    const line = lines[n]!.trim();
    const fail = (reason: string): never => {
      throw new ParseError(kind, n + 1, reason);
    };
    if (line === '') continue;
    if (HEADER.test(line)) {
      if (state === 'header') fail('two `Offset Values` headers in a row');
      state = 'header';
      dumps++;
      next = -1;
      continue;
    }
    if (RULE.test(line)) {
      if (state !== 'header') fail('`------` rule without an `Offset Values` header');
      state = 'rows';
      continue;
    }
    const m = ROW.exec(line);
    if (!m) fail(`unexpected line in hex dump: ${JSON.stringify(line.slice(0, 60))}`);
    if (state !== 'rows') fail('hex row before the `Offset Values` header');
    const offset = parseInt(m![1]!, 16);
    const cells = m![2]!
      .trim()
      .split(/\s+/)
      .filter((c) => c !== '');
    if (cells.length === 0 || cells.length > 16) fail(`row 0x${m![1]} has ${cells.length} bytes (1..16 expected)`);
    if (next === -2) fail(`row 0x${m![1]} follows a short row`);
    if (next >= 0 && offset !== next) fail(`row 0x${m![1]} out of sequence (0x${next.toString(16).padStart(4, '0')} expected)`);
    if (offset + cells.length > MAX_OFFSET) fail(`row 0x${m![1]} beyond offset 0x${MAX_OFFSET.toString(16)}`);
    cells.forEach((c, k) => {
      if (!/^[0-9a-fA-F]{2}$/.test(c)) fail(`row 0x${m![1]}: ${JSON.stringify(c)} is not a hex byte`);
      const v = parseInt(c, 16);
      const at = offset + k;
      const old = bytes[at];
      if (old === undefined) {
        bytes[at] = v;
        bytesRead++;
      } else if (old !== v) {
        fail(`byte 0x${at.toString(16)} read twice with different values (${hex2(old)} then ${hex2(v)})`);
      }
    });
    next = cells.length === 16 ? offset + 16 : -2;
  }
  if (state === 'header') throw new ParseError(kind, lines.length, 'dump header without rows');
  if (bytesRead === 0) throw new ParseError(kind, 1, 'no hex rows (`0x0000:  xx xx ...`) found');
  return { bytes, bytesRead, dumps };
}
