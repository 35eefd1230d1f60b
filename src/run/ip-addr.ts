import { ParseError } from '../domain/errors.js';

// The IPv4 address of a rail's netdev from `ip -o -4 addr show dev <if>` (first address; null when it has none).
export function parseIpAddr(text: string): string | null {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  for (const [i, line] of lines.entries()) {
    const m = /^\d+:\s+\S+\s+inet\s+(\d{1,3}(?:\.\d{1,3}){3})\/\d{1,2}\b/.exec(line);
    if (m) return m[1]!;
    if (!/^\d+:\s/.test(line)) throw new ParseError('ip-addr', i + 1, `not an "ip -o addr" line: ${line.slice(0, 60)}`);
  }
  return null;
}
