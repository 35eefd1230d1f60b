// Writes what the rule registry and the protocol schema say about themselves into the files people and editors read:
// the rules version README states and docs/grading.md's verdict table (between their markers), the `limits` part of protocols/protocol.schema.json, the table of
// protocol bounds in docs/protocol.md, and the hash of each built-in protocol in protocols/released.txt (appended when a
// built-in protocol changed). `--check` only says whether they are current.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { limitsSchema, verdictTable, withRulesVersion, withVerdictTable } from '../src/rules/docs.js';
import { boundsTable, withBoundsTable } from '../src/protocol/schema.js';
import { RELEASED_PATH, parseReleased } from '../src/protocol/released.js';
import { createHash } from 'node:crypto';

const root = join(import.meta.dirname, '..');
const readmePath = join(root, 'README.md');
const schemaPath = join(root, 'protocols', 'protocol.schema.json');
const protocolDocPath = join(root, 'docs', 'protocol.md');

const gradingPath = join(root, 'docs', 'grading.md');
const readme = readFileSync(readmePath, 'utf8');
const nextReadme = withRulesVersion(readme);
const grading = readFileSync(gradingPath, 'utf8');
const nextGrading = withVerdictTable(grading, verdictTable());
const schema = JSON.parse(readFileSync(schemaPath, 'utf8')) as { properties: Record<string, unknown> };
schema.properties['limits'] = limitsSchema();
const nextSchema = `${JSON.stringify(schema, null, 2)}\n`;
const protocolDoc = readFileSync(protocolDocPath, 'utf8');
const nextProtocolDoc = withBoundsTable(protocolDoc, boundsTable(schema));
const released = readFileSync(RELEASED_PATH, 'utf8');
const shipped = parseReleased(released);
const added = [...shipped.keys()]
  .map(
    (name) =>
      `${name} ${createHash('sha256')
        .update(readFileSync(join(root, 'protocols', `${name}.json`)))
        .digest('hex')}`,
  )
  .filter((line) => !released.split('\n').includes(line));
const nextReleased = added.length ? `${released}${added.join('\n')}\n` : released;
const stale = [
  nextReleased !== released ? 'protocols/released.txt' : null,
  nextReadme !== readme ? 'README.md' : null,
  nextGrading !== grading ? 'docs/grading.md' : null,
  nextSchema !== readFileSync(schemaPath, 'utf8') ? 'protocols/protocol.schema.json' : null,
  nextProtocolDoc !== protocolDoc ? 'docs/protocol.md' : null,
].filter(Boolean);
if (process.argv.includes('--check')) {
  if (stale.length) {
    process.stderr.write(`not current: ${stale.join(', ')} (run npx tsx scripts/rule-docs.ts)\n`);
    process.exit(1);
  }
} else {
  writeFileSync(readmePath, nextReadme);
  writeFileSync(gradingPath, nextGrading);
  writeFileSync(schemaPath, nextSchema);
  writeFileSync(protocolDocPath, nextProtocolDoc);
  writeFileSync(RELEASED_PATH, nextReleased);
  process.stdout.write(stale.length ? `updated ${stale.join(', ')}\n` : 'already current\n');
}
