// One import for the run orchestrator and the report writers.
export { gradeRun, type CableVerdict } from './grade-run.js';
export { checkLimit, formatLimit, formatNumber, gradeValue } from './in-range.js';
export { checkLoopback, checkGpuLoaded, checkRails } from './setup-checks.js';
