// What the registry says about itself, for people and editors: the JSON Schema of a protocol's `limits` and README's
// verdict table. scripts/rule-docs.ts writes both into their files; test/rules/docs.test.ts checks they are current.
import { LIMIT_KEYS, RULES, RULES_VERSION, type RuleDeclaration } from './registry.js';
import { formatNumber } from './in-range.js';

type Json = Record<string, unknown>;

// The JSON Schema (draft 2020-12) of `limits`: one entry per rule, with the rule's direction, unit and settings.
export function limitsSchema(rules: readonly RuleDeclaration[] = RULES): Json {
  const base: Json = {
    rule: { enum: rules.map((r) => r.id) },
    direction: { enum: ['min', 'max'], description: 'optional: each rule declares it (a file may not flip it)' },
    fail: { type: 'number' },
    marginal: { type: 'number' },
    unit: { type: 'string', minLength: 1, description: 'optional: each rule declares it' },
    description: { type: 'string', minLength: 1 },
  };
  return {
    type: 'array',
    description: `One limit per rule id (rules version ${RULES_VERSION}); a rule left out gets its declared default. max: FAIL when value >= fail, MARGINAL when value >= marginal. min: FAIL when value < fail, MARGINAL when value < marginal. Generated from src/rules/registry.ts by scripts/rule-docs.ts.`,
    items: {
      type: 'object',
      required: [...LIMIT_KEYS.required],
      properties: base,
      allOf: rules.map((r) => ({
        if: { properties: { rule: { const: r.id } } },
        then: {
          description: `${r.label}: ${r.measured}`,
          properties: {
            direction: { const: r.direction },
            unit: { const: r.unit },
            fail: { type: 'number', default: r.fail },
            ...(r.marginal !== undefined ? { marginal: { type: 'number', default: r.marginal } } : {}),
            ...Object.fromEntries(
              Object.entries(r.params).map(([k, p]) => [k, { type: 'number', [p.minExclusive ? 'exclusiveMinimum' : 'minimum']: p.min, default: p.default, description: `${p.unit}: ${p.doc}` }]),
            ),
          },
          propertyNames: { enum: [...LIMIT_KEYS.required, ...LIMIT_KEYS.optional, ...Object.keys(r.params)] },
        },
      })),
    },
  };
}

const BEGIN = '<!-- verdict-table:begin (generated from src/rules/registry.ts by `npx tsx scripts/rule-docs.ts`; do not edit) -->';
const END = '<!-- verdict-table:end -->';

// README's verdict table: per cable rule its FAIL and MARGINAL bands, how it is measured, and when it stops a run.
export function verdictTable(rules: readonly RuleDeclaration[] = RULES): string {
  const bands = (r: RuleDeclaration, v: number | undefined) => (v === undefined ? '—' : `${r.direction === 'max' ? '>=' : '<'} ${formatNumber(v)}${r.unit === 'x' ? 'x' : ` ${r.unit}`}`);
  const settings = (r: RuleDeclaration) =>
    Object.entries(r.params)
      .map(([k, p]) => `\`${k}\` ${formatNumber(p.default)}${p.unit === 'BER' ? '' : ` ${p.unit}`}`)
      .join(', ');
  const rows = rules
    .filter((r) => r.kind === 'cable')
    .map((r) => `| \`${r.id}\` | ${bands(r, r.fail)} | ${bands(r, r.marginal)} | ${r.measured}${settings(r) ? ` (${settings(r)})` : ''} | ${r.earlyStop ?? 'no'} |`);
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

// README's text with the table between the markers replaced by `table` (the markers must be there).
export function withVerdictTable(readme: string, table: string): string {
  const a = readme.indexOf('<!-- verdict-table:begin');
  const b = readme.indexOf(END);
  if (a < 0 || b < 0) throw new Error('README.md has no verdict-table markers');
  return readme.slice(0, a) + table + readme.slice(b + END.length);
}
