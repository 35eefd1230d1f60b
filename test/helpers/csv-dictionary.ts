// The CSV column dictionary of docs/outputs.md, made from src/report/csv-columns.ts (test/report/outputs-doc.test.ts
// holds the doc to it; `npx tsx test/helpers/csv-dictionary.ts` prints it).
import { CSV_COLUMNS } from '../../src/report/csv-columns.js';

const cell = (s: string | undefined) => (s ?? '').replace(/\|/g, '\\|');

export function csvDictionary(): string {
  const out: string[] = [];
  for (const [file, cols] of Object.entries(CSV_COLUMNS)) {
    if (file === 'compare.csv') continue; // the same columns as summary.csv
    out.push(
      `### ${file === 'summary.csv' ? 'summary.csv, compare.csv and batch.csv' : file}`,
      '',
      '| column | unit | phase | receiver | definition |',
      '|---|---|---|---|---|',
    );
    for (const c of cols) out.push(`| \`${c.name}\` | ${cell(c.unit)} | ${cell(c.phase)} | ${cell(c.receiver)} | ${cell(c.description)} |`);
    out.push('');
  }
  return out.join('\n');
}

if (process.argv[1]?.endsWith('csv-dictionary.ts')) process.stdout.write(csvDictionary());
