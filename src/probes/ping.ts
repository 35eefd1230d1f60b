// `ping -I <if> -c N <addr>` (iputils ping/ping_common.c; samples/ping/): whether any echo was answered, from the
// statistics line "N packets transmitted, M received".
import { ParseError } from '../domain/errors.js';

const STATS = /^(\d+) packets transmitted, (\d+) received/m;

export function parsePingReplied(text: string): boolean {
  const m = STATS.exec(text);
  if (!m) {
    // ping said why it sent nothing (no such device, network unreachable): no reply.
    if (/^ping: /m.test(text)) return false;
    throw new ParseError('ping', 1, 'no "packets transmitted" statistics line');
  }
  return Number(m[2]) > 0;
}
