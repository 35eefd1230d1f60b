import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { labRun } from '../faults/lab-run.js';

// Ctrl-C in process: every load stops and an ABORTED record is left (the real binary under SIGINT, SIGTERM and
// SIGKILL: signals.system.test.ts).
describe('signals', () => {
  it('abort in process mid loaded soak: every load process gone on both nodes within 5 s, ABORTED record', async () => {
    const r = await labRun({ scenario: 'good-qsfp56', abortAtS: 150 });
    expect(r.abortedAtS).toBe(150);
    // Loads were running when the signal came: on each node the clients sending to the other node, the servers
    // receiving from it (one stream per rail and direction) and the GPU load.
    expect(r.runningAtAbort['spark-a']!.sort()).toEqual([
      'soak-loaded-client-0',
      'soak-loaded-client-1',
      'soak-loaded-gpu',
      'soak-loaded-server-0-rev',
      'soak-loaded-server-1-rev',
    ]);
    expect(r.runningAtAbort['spark-b']!.sort()).toEqual([
      'soak-loaded-client-0-rev',
      'soak-loaded-client-1-rev',
      'soak-loaded-gpu',
      'soak-loaded-server-0',
      'soak-loaded-server-1',
    ]);
    for (const n of r.lab.nodes) expect(r.lab.processes(n)).toEqual([]);
    // Everything, stopping included, finished within 5 simulated seconds of the interrupt.
    expect(r.lab.timeS() - 150).toBeLessThanOrEqual(5);
    expect(r.record.outcome).toBe('ABORTED');
    expect(r.record.reasons).toEqual([{ rule: 'aborted', message: 'run stopped: interrupted by SIGINT (test)' }]);
    expect(JSON.parse(readFileSync(join(r.runDir, 'record.json'), 'utf8')).outcome).toBe('ABORTED');
    expect(r.journal.find((l) => l.type === 'aborted')?.phase).toBe('soak-loaded');
  });
});
