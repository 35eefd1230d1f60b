// Child process of the grading benchmark: grade one run directory, print wall time and peak RSS as one JSON line.
import { gradeRunDir } from '../src/cli/grade-command.js';

const runDir = process.argv[2];
if (!runDir) throw new Error('usage: grade-child.ts <run dir>');
const baselineRssMB = process.resourceUsage().maxRSS / 1024; // after loading the code, before reading the journal
const t0 = performance.now();
const record = gradeRunDir(runDir);
const wallMs = performance.now() - t0;
const maxRssMB = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify({ wallMs, maxRssMB, baselineRssMB, outcome: record.outcome })}\n`);
