// The run directories the previous version wrote (test/fixtures/journals-v1, real simulated runs), for CLI tests.
import { cpSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';

// Copy run `name` of fixture set `set` (test/fixtures/<set>) to `into`, its journal unpacked beside the .gz; returns `into`.
export function unpackFixtureRun(set: string, name: string, into: string): string {
  const from = join(process.cwd(), 'test', 'fixtures', set, name);
  cpSync(from, into, { recursive: true });
  writeFileSync(join(into, 'journal.jsonl'), gunzipSync(readFileSync(join(from, 'journal.jsonl.gz'))));
  return into;
}

// Copy fixture run `name` of journals-v1 to `into`, its journal unpacked; returns `into`.
export function unpackV1(name: string, into: string): string {
  return unpackFixtureRun('journals-v1', name, into);
}
