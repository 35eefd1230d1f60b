import { listScenarios } from '../sim/lab.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

// `cablequal sim scenarios`: what the simulated lab can play and what verdict each should get.
export async function scenariosCommand(io: CliIo): Promise<number> {
  for (const s of listScenarios()) io.stdout(`${s.name.padEnd(18)} ${s.expectedOutcome.padEnd(9)} ${s.description}\n`);
  return EXIT.ok;
}
