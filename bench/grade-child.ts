// Child process of the grading benchmark: grade one run directory, print wall time and peak RSS as one JSON line.
import { gradeRunDir } from '../src/cli/grade-command.js';

const runDir = process.argv[2];
if (!runDir) throw new Error('usage: grade-child.ts <run dir>');
const baselineRssMB = process.resourceUsage().maxRSS / 1024; // after loading the code, before reading the journal
const t0 = performance.now();
const cpu0 = process.cpuUsage();
const record = gradeRunDir(runDir);
const wallMs = performance.now() - t0;
// CPU time of the call (user + system): what the grading costs even when the machine is shared and wall time is not.
const cpu = process.cpuUsage(cpu0);
const cpuMs = (cpu.user + cpu.system) / 1000;
const maxRssMB = process.resourceUsage().maxRSS / 1024;
process.stdout.write(`${JSON.stringify({ wallMs, cpuMs, maxRssMB, baselineRssMB, outcome: record.outcome })}\n`);
