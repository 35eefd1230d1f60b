// The run directories the previous version wrote (test/fixtures/journals-v1, real simulated runs), for CLI tests.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

const V1 = join(process.cwd(), 'test', 'fixtures', 'journals-v1');

// Copy fixture run `name` to `into`, its journal unpacked beside the .gz; returns `into`.
export function unpackV1(name: string, into: string): string {
  cpSync(join(V1, name), into, { recursive: true });
  writeFileSync(join(into, 'journal.jsonl'), gunzipSync(readFileSync(join(V1, name, 'journal.jsonl.gz'))));
  return into;
}
