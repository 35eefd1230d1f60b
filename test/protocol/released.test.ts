// protocols/released.txt holds every version of the built-in protocols ever shipped: the files as they are now, and
// the texts the compat journals embed under a built-in name.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { builtinStatus, releasedProtocols } from '../../src/protocol/released.js';
import { compatRuns, FIXTURES } from '../compat/golden.js';
import { gunzipSync } from 'node:zlib';

const ROOT = join(import.meta.dirname, '..', '..');
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

describe('the released built-in protocols', () => {
  it('names spark-burnin and quick, and the file of each is a released version (a change to one adds its hash)', () => {
    expect([...releasedProtocols().keys()].sort()).toEqual(['quick', 'spark-burnin']);
    for (const name of releasedProtocols().keys()) {
      const h = sha(readFileSync(join(ROOT, 'protocols', `${name}.json`)));
      expect(releasedProtocols().get(name), `protocols/${name}.json (${h}): npx tsx scripts/rule-docs.ts adds its SHA-256 to protocols/released.txt`).toContain(
        h,
      );
    }
  });

  it('every compat journal`s embedded protocol is a released version of the built-in it names', () => {
    for (const run of compatRuns()) {
      const start = JSON.parse(
        gunzipSync(readFileSync(join(FIXTURES, run, 'journal.jsonl.gz')))
          .toString('utf8')
          .split('\n')[0]!,
      ) as {
        protocol: { name: string; sha256: string };
        protocolText: string;
      };
      expect(sha(start.protocolText), run).toBe(start.protocol.sha256);
      expect(builtinStatus(start.protocol.name, start.protocol.sha256), run).toBe('builtin');
    }
  });

  it('tells a built-in`s name on another text, and a name of the lab`s own', () => {
    expect(builtinStatus('quick', '0'.repeat(64))).toBe('foreign');
    expect(builtinStatus('my-lab-burnin', '0'.repeat(64))).toBe('own');
  });
});
