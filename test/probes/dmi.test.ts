// DMI strings: what machine a node is, and whether it says it is the simulated lab.
import { describe, expect, it } from 'vitest';
import { parseDmi, SIMULATED_SYS_VENDOR } from '../../src/probes/dmi.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { cmd } from '../../src/transport/commands.js';
import { parseErrorOf } from '../helpers/parse-error.js';

describe('parseDmi', () => {
  it('reads the grep -H lines; absent attributes stay null; a real vendor is not simulated', () => {
    const f = parseDmi('/sys/class/dmi/id/sys_vendor:NVIDIA\n/sys/class/dmi/id/product_name:DGX Spark\n/sys/class/dmi/id/bios_version:5.36_0ACUM027\n');
    expect(f).toEqual({
      sysVendor: 'NVIDIA',
      productName: 'DGX Spark',
      productVersion: null,
      boardName: null,
      biosVendor: null,
      biosVersion: '5.36_0ACUM027',
      biosDate: null,
      simulated: false,
    });
  });

  it('treats values as untrusted: control characters dropped, capped at 128 characters', () => {
    const f = parseDmi(`/sys/class/dmi/id/product_name:A\u001b[31mB\u0007${'x'.repeat(300)}\n`);
    expect(f.productName).toBe(`A[31mB${'x'.repeat(122)}`);
  });

  it('refuses a line that is not a DMI attribute, naming the line', () => {
    expect(parseErrorOf(() => parseDmi('/sys/class/dmi/id/sys_vendor:NVIDIA\nhello\n'))).toMatchObject({ kind: 'dmi', line: 2 });
  });

  it('the simulated lab says it is simulated through the same files a real node answers', async () => {
    const lab = createLab({ scenario: 'good-qsfp56', clock: new VirtualClock() });
    const r = await lab.runner('spark-a').run(cmd.dmi());
    // grep exits 2 when one attribute is unreadable (no bios_date here), as on a real node: the lines still count.
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe('');
    const f = parseDmi(r.stdout);
    expect(f.sysVendor).toBe(SIMULATED_SYS_VENDOR);
    expect(f.simulated).toBe(true);
    expect(f.productName).toMatch(/simulated/);
  });
});
