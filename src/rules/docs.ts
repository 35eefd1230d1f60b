// What the registry says about itself, for people and editors: the JSON Schema of a protocol's `limits`, the rules
// version README states and docs/grading.md's
// verdict table. scripts/rule-docs.ts writes both into their files; test/rules/docs.test.ts checks they are current.
import { LIMIT_KEYS, type Bounds, type RuleDeclaration } from './definitions.js';
import { RULES, RULES_VERSION } from './versions.js';
import { formatNumber } from '../domain/number-format.js';

type Json = Record<string, unknown>;

// No control characters (a newline, ESC or NUL in a protocol string would break a command line or a terminal).
export const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f]*$';

// A number's JSON Schema from its physical range: `title` names what it counts (an error message quotes it), the
// reason for the range goes into the description.
export function boundsSchema(b: Bounds, title: string, description?: string): Json {
  return {
    title,
    type: b.integer ? 'integer' : 'number',
    [b.minExclusive ? 'exclusiveMinimum' : 'minimum']: b.min,
    [b.maxExclusive ? 'exclusiveMaximum' : 'maximum']: b.max,
    description: description ? `${description} Bounds: ${b.why}.` : `Bounds: ${b.why}.`,
  };
}

const unitTitle = (unit: string) => (unit === 'x' ? 'x, a ratio' : unit);

// The JSON Schema (draft 2020-12) of `limits`: one entry per rule, with the rule's direction, unit, the physical range
// of its thresholds and its settings. The protocol loader validates against this, built from the registry it is given.
export function limitsSchema(rules: readonly RuleDeclaration[] = RULES): Json {
  const base: Json = {
    rule: { enum: rules.map((r) => r.id) },
    direction: { enum: ['min', 'max'], description: 'optional: each rule declares it (a file may not flip it)' },
    fail: { description: 'a number in the range of its rule (below)' },
    marginal: { description: 'a number in the range of its rule (below), on the good side of fail' },
    unit: { type: 'string', minLength: 1, maxLength: 32, description: 'optional: each rule declares it' },
    description: { type: 'string', minLength: 1, maxLength: 2000, pattern: NO_CONTROL },
  };
  return {
    type: 'array',
    maxItems: 4 * rules.length,
    description: `One limit per rule id (rules version ${RULES_VERSION}); a rule left out gets its declared default. max: FAIL when value >= fail, MARGINAL when value >= marginal. min: FAIL when value < fail, MARGINAL when value < marginal. Generated from src/rules/definitions.ts by scripts/rule-docs.ts.`,
    items: {
      type: 'object',
      required: [...LIMIT_KEYS.required],
      properties: base,
      allOf: rules.map((r) => ({
        if: { properties: { rule: { const: r.id } }, required: ['rule'] },
        then: {
          description: `${r.label}: ${r.measured}`,
          properties: {
            rule: true,
            fail: { ...boundsSchema(r.range, unitTitle(r.unit), `${r.unit}: ${r.direction === 'max' ? 'FAIL at or above' : 'FAIL below'}.`), default: r.fail },
            direction: { const: r.direction },
            marginal: {
              ...boundsSchema(r.range, unitTitle(r.unit), `${r.unit}: MARGINAL ${r.direction === 'max' ? 'at or above' : 'below'}, on the good side of fail.`),
              ...(r.marginal !== undefined ? { default: r.marginal } : {}),
            },
            unit: { const: r.unit },
            description: true,
            ...Object.fromEntries(
              Object.entries(r.params).map(([k, p]) => [k, { ...boundsSchema(p, `${p.unit}: ${p.doc}`, `${p.unit}: ${p.doc}.`), default: p.default }]),
            ),
          },
          additionalProperties: false,
        },
      })),
    },
  };
}

const BEGIN = '<!-- verdict-table:begin (generated from src/rules/definitions.ts by `npx tsx scripts/rule-docs.ts`; do not edit) -->';
const END = '<!-- verdict-table:end -->';

// docs/grading.md's verdict table: per cable rule its FAIL and MARGINAL bands, how it is measured, and when it stops a run.
export function verdictTable(rules: readonly RuleDeclaration[] = RULES): string {
  const bands = (r: RuleDeclaration, v: number | undefined) =>
    v === undefined ? '—' : `${r.direction === 'max' ? '>=' : '<'} ${formatNumber(v)}${r.unit === 'x' ? 'x' : ` ${r.unit}`}`;
  const settings = (r: RuleDeclaration) =>
    Object.entries(r.params)
      .map(([k, p]) => `\`${k}\` ${formatNumber(p.default)}${p.unit === 'BER' ? '' : ` ${p.unit}`}`)
      .join(', ');
  const rows = rules
    .filter((r) => r.kind === 'cable')
    .map(
      (r) =>
        `| \`${r.id}\` | ${bands(r, r.fail)} | ${bands(r, r.marginal)} | ${r.measured}${settings(r) ? ` (${settings(r)})` : ''} | ${r.earlyStop ?? 'no'} |`,
    );
  const setup = rules.filter((r) => r.kind === 'setup').map((r) => `\`${r.id}\` (${bands(r, r.fail)}: ${r.measured})`);
  return [
    BEGIN,
    `Rules version ${RULES_VERSION}. Defaults; each protocol may set its own in \`limits\`.`,
    '',
    '| rule | FAIL | MARGINAL | measured | stops the run early |',
    '|---|---|---|---|---|',
    ...rows,
    '',
    `Setup checks (ERROR, never a cable grade): ${setup.join('; ')}.`,
    END,
  ].join('\n');
}

// docs/grading.md's text with the table between the markers replaced by `table` (the markers must be there).
export function withVerdictTable(doc: string, table: string): string {
  const a = doc.indexOf('<!-- verdict-table:begin');
  const b = doc.indexOf(END);
  if (a < 0 || b < 0) throw new Error('docs/grading.md has no verdict-table markers');
  return doc.slice(0, a) + table + doc.slice(b + END.length);
}

// README's statement of today's rules version, between its markers (generated: the README never retypes it).
const VERSION_BEGIN = '<!-- rules-version -->';
const VERSION_END = '<!-- /rules-version -->';
export function withRulesVersion(readme: string, version: number = RULES_VERSION): string {
  const a = readme.indexOf(VERSION_BEGIN);
  const b = readme.indexOf(VERSION_END);
  if (a < 0 || b < a) throw new Error('README.md has no rules-version markers');
  return `${readme.slice(0, a + VERSION_BEGIN.length)}rules version ${version}${readme.slice(b)}`;
}
