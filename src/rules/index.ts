// One import for the protocol loader, the grading and the report writers: the rules, declared once.
export { RULES, RULES_VERSION, ruleOf, defaultLimit, type RuleDeclaration, type ParamDeclaration, type Check, type MeasureInput } from './registry.js';
export { checkLimit, formatLimit, formatNumber, gradeValue, labelOf, sayLimit } from './in-range.js';
export { watchSettingsOf } from './watch.js';
