import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

export const SAMPLES_DIR = join(import.meta.dirname, '..', '..', 'samples');

// Read a recorded sample from samples/ without its `# source:` line (the harness never sees that line).
export function sample(rel: string): string {
  const text = readFileSync(join(SAMPLES_DIR, rel), 'utf8');
  return text.startsWith('# source:') ? text.slice(text.indexOf('\n') + 1) : text;
}

// The `# source:` line of a sample, to check provenance is kept.
export function sampleSource(rel: string): string {
  return readFileSync(join(SAMPLES_DIR, rel), 'utf8').split('\n')[0]!;
}

// All sample files of one folder of samples/.
export function samplesIn(folder: string): string[] {
  return readdirSync(join(SAMPLES_DIR, folder))
    .filter((f) => f.endsWith('.txt'))
    .map((f) => `${folder}/${f}`);
}
