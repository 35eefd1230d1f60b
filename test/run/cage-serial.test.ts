// One cable in one cage: both PCIe functions of the cage read the same EEPROM serial. Two functions that read two
// serials are not one cage, whatever ibdev2netdev and sysfs said (simulated lab; one function's EEPROM answer is
// replaced by another generated cable's).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { probeEnd } from '../../src/batch/cable-ends.js';
import { encodeSff8636, formatHexDump } from '../../src/eeprom/encode.js';
import { loadProtocol } from '../../src/protocol/index.js';
import { runQualification } from '../../src/run/qualify.js';
import { persistentTickSource } from '../../src/run/tick-source.js';
import { createLab } from '../../src/sim/lab.js';
import { VirtualClock } from '../../src/sim/virtual-clock.js';
import { cmd } from '../../src/transport/commands.js';
import type { CommandRunner } from '../../src/transport/types.js';

const QUICK = join(import.meta.dirname, '..', '..', 'protocols', 'quick.json');
const OTHER = encodeSff8636({
  vendorName: 'Other',
  vendorOui: '00:00:00',
  vendorPn: 'OTHER-PN',
  vendorRev: 'A',
  vendorSn: 'OTHERSERIAL',
  dateCode: '250101',
  lengthM: 1,
  attenuationDb: {},
});

// spark-b's second function answers the upper-page read with another cable's bytes.
function otherSerialOnRail1(r: CommandRunner): CommandRunner {
  return new Proxy(r, {
    get(target, prop, recv) {
      if (prop !== 'run') return Reflect.get(target, prop, recv);
      return async (command: string, opts?: object) => {
        if (command === cmd.eepromUpper('enP2p1s0f1np1'))
          return { command, stdout: formatHexDump(OTHER.slice(128), 128), stderr: '', exitCode: 0, signal: null, durationMs: 1 };
        return target.run(command, opts);
      };
    },
  });
}

describe('the same serial on both functions of the cage', () => {
  it('the batch does not take a cage whose two functions read two serials; preflight ends ERROR preflight-rails', async () => {
    const clock = new VirtualClock();
    const lab = createLab({ scenario: 'good-qsfp56', clock });
    const runners = new Map(lab.nodes.map((n) => [n, n === 'spark-b' ? otherSerialOnRail1(lab.runner(n)) : lab.runner(n)]));
    expect(await probeEnd(runners.get('spark-a')!, 1)).toEqual({ up: true, serial: 'MT2412VS01157', partNumber: 'MCP1650-V00AE30', note: null });
    expect(await probeEnd(runners.get('spark-b')!, 1)).toEqual({
      up: true,
      serial: null,
      partNumber: null,
      note: 'cage 1: enp1s0f1np1 reads serial MT2412VS01157, enP2p1s0f1np1 reads OTHERSERIAL',
    });

    const { record } = await runQualification({
      clock,
      runners,
      nodes: lab.nodes.map((name) => ({ name, host: name, cage: 'auto' as const })),
      protocol: loadProtocol(QUICK),
      protocolText: readFileSync(QUICK, 'utf8'),
      outDir: mkdtempSync(join(tmpdir(), 'cq-serials-')),
      label: 'serials',
      runId: 'run1',
      log: pino({ level: 'silent' }),
      signal: new AbortController().signal,
      simulated: true,
      makeTickSource: (ns, intervalS) => persistentTickSource(ns, clock, { intervalS }),
    });
    expect(record.outcome).toBe('ERROR');
    expect(record.reasons).toEqual([
      expect.objectContaining({
        rule: 'preflight-rails',
        node: 'spark-b',
        message: 'spark-b: cage 1: enp1s0f1np1 reads cable serial MT2412VS01157 but enP2p1s0f1np1 reads OTHERSERIAL: these two functions are not one cage',
      }),
    ]);
  });
});
