// One import for the run orchestrator and the report writers.
export { gradeRun, headlineOf, headlinePhase, type CableVerdict } from './grade-run.js';
export { checkLimit, formatLimit, formatNumber, gradeValue } from '../rules/in-range.js';
export { checkLoopback, checkGpuLoaded, checkRails } from './setup-checks.js';
