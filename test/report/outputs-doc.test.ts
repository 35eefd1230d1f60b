// docs/outputs.md states the CSV column dictionary as src/report/csv-columns.ts declares it (#31 item 7), and the one
// reason shape every JSON output gives (src/domain/result.ts).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { reasonJson } from '../../src/domain/result.js';
import { csvDictionary } from '../helpers/csv-dictionary.js';

const doc = readFileSync(join(process.cwd(), 'docs', 'outputs.md'), 'utf8');

describe('docs/outputs.md', () => {
  it('holds the CSV column dictionary of every CSV, with unit, phase and receiver', () => {
    const start = doc.indexOf('<!-- csv-dictionary:');
    const end = doc.indexOf('<!-- /csv-dictionary -->');
    expect(start).toBeGreaterThan(0);
    expect(doc.slice(doc.indexOf('\n', start), end).trim()).toBe(csvDictionary().trim());
    expect(doc).toContain('| `fec_margin_decades` | decades | graded soaks | worst receiver |');
  });

  it('lists every field of the reason shape, in its order', () => {
    const fields = Object.keys(reasonJson({ rule: 'r', message: 'm' }));
    const table = doc.slice(doc.indexOf('## One reason shape'), doc.indexOf('## `--json`'));
    expect([...table.matchAll(/^\| `([a-zA-Z]+)` \|/gm)].map((m) => m[1])).toEqual(fields);
  });
});
