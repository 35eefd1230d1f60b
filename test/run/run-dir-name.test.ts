import { readdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { describe, expect, it } from 'vitest';
import { labRun } from '../faults/lab-run.js';

describe('the run dir of an unlabelled run', () => {
  it('is named by the cable serial once the EEPROM is read, and leaves no empty unidentified/ behind', async () => {
    const run = await labRun({ scenario: 'good-qsfp112', protocol: 'quick', label: null, abortAtS: 60 });
    const out = dirname(dirname(run.runDir));
    expect(basename(dirname(run.runDir))).toBe(run.record.cable.serial);
    expect(readdirSync(out).sort()).toEqual([run.record.cable.serial]);
  }, 60_000);
});
