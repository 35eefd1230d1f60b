// What a run records about each node for traceability (NIC driver and firmware, OS release, perftest, NCCL), parsed
// from real outputs where they exist, and answered by the simulated lab with generated values.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseEthtoolDriver } from '../../src/probes/ethtool-driver.js';
import { osReleaseText, parseOsRelease } from '../../src/probes/os-release.js';
import { parsePerftestVersion } from '../../src/probes/perftest-version.js';
import { parseGpuVersions } from '../../src/probes/gpu-versions.js';
import { parseMpirunVersion } from '../../src/probes/mpirun-version.js';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { runCli } from '../helpers/cli.js';
import { csvObjects } from '../helpers/csv.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';
import { sample } from '../helpers/samples.js';

// The `ethtool -i` block of the real ConnectX-4 paste (between its first pair of ``` fences).
const ETHTOOL_I = sample('ethtool-stats/cx4-ubuntu1804-ethtool-i-and-S-head-partial.txt').split('```')[1]!.replace(/^\n/, '');

// /etc/dgx-release and /etc/os-release as `grep -H .` prints them, in the KEY="value" layout those files use
// (constructed for this test, not recorded: no real DGX Spark paste of the pair was found).
const RELEASE = [
  '/etc/dgx-release:DGX_NAME="DGX Spark"',
  '/etc/dgx-release:DGX_PRETTY_NAME="NVIDIA DGX Spark"',
  '/etc/dgx-release:DGX_SWBUILD_VERSION="7.2.3"',
  '/etc/dgx-release:DGX_SERIAL_NUMBER="1234567890123"',
  '/etc/dgx-release:DGX_OTA_VERSION="7.5.0"',
  '/etc/os-release:PRETTY_NAME="Ubuntu 24.04.3 LTS"',
  '/etc/os-release:NAME="Ubuntu"',
  '/etc/os-release:VERSION_ID="24.04"',
  '/etc/os-release:ID=ubuntu',
].join('\n');

describe('node facts parsers', () => {
  it('ethtool -i: driver, version, firmware with PSID and bus address, on the real mlx5 output', () => {
    expect(parseEthtoolDriver(ETHTOOL_I)).toEqual({
      driver: 'mlx5_core',
      version: '5.0-0',
      firmwareVersion: '14.23.1020 (MT_2420110034)',
      busInfo: '0000:af:00.0',
    });
    expect(parseErrorOf(() => parseEthtoolDriver('NIC statistics:\n     rx_packets: 1\n')).line).toBe(1);
    expect(parseErrorOf(() => parseEthtoolDriver('version: 1\n')).reason).toMatch(/no "driver:" line/);
    fuzzParser(parseEthtoolDriver, [ETHTOOL_I]);
  });

  it('DGX OS release (OTA version, the installed build beside it) and the Ubuntu release; the machine serial is never kept', () => {
    const r = parseOsRelease(RELEASE);
    expect(r).toEqual({
      dgx: { DGX_NAME: 'DGX Spark', DGX_PRETTY_NAME: 'NVIDIA DGX Spark', DGX_SWBUILD_VERSION: '7.2.3', DGX_OTA_VERSION: '7.5.0' },
      os: { PRETTY_NAME: 'Ubuntu 24.04.3 LTS', NAME: 'Ubuntu', VERSION_ID: '24.04', ID: 'ubuntu' },
    });
    expect(osReleaseText(r)).toBe('NVIDIA DGX Spark, DGX OS 7.5.0 (installed 7.2.3); Ubuntu 24.04.3 LTS');
    // Plain Ubuntu (no /etc/dgx-release): the fallback.
    expect(
      osReleaseText(
        parseOsRelease(
          RELEASE.split('\n')
            .filter((l) => l.startsWith('/etc/os-release'))
            .join('\n'),
        ),
      ),
    ).toBe('Ubuntu 24.04.3 LTS');
    expect(osReleaseText(parseOsRelease(''))).toBeNull();
    expect(parseErrorOf(() => parseOsRelease('/etc/shadow:root:x\n')).line).toBe(1);
    fuzzParser(parseOsRelease, [RELEASE]);
  });

  it('perftest prints "Version: <x>" for --version (perftest_parameters.c); anything else is a ParseError', () => {
    expect(parsePerftestVersion('Version: 6.22\n')).toBe('6.22');
    expect(parseErrorOf(() => parsePerftestVersion(" Couldn't find device\n")).reason).toMatch(/no "Version: <x>" line/);
    fuzzParser(parsePerftestVersion, ['Version: 6.22\n']);
  });

  it("GPU driver and the CUDA version it supports, from the header of nvidia-smi's default table on two GB10s", () => {
    const spark = sample('nvidia-smi/dgx-spark-7d19-default-table-580.95.05-partial.txt');
    const idle = sample('nvidia-smi/gb10-default-table-580.173.02-idle-P8.txt');
    expect(parseGpuVersions(spark)).toEqual({ driver: '580.95.05', cuda: '13.0' });
    expect(parseGpuVersions(idle)).toEqual({ driver: '580.173.02', cuda: '13.0' });
    // The query form has no header line: not this parser's text.
    expect(parseErrorOf(() => parseGpuVersions(sample('nvidia-smi/gb10-query-name-memtotal-driver-noheader.txt'))).reason).toMatch(
      /^no "NVIDIA-SMI \.\.\. Driver Version: \.\.\." header line/,
    );
    fuzzParser(parseGpuVersions, [spark, idle]);
  });

  it('Open MPI prints "mpirun (Open MPI) <version>" for --version, 4.1.6 and 5.0.9 alike; MPICH is named', () => {
    const v4 = sample('mpirun-version/openmpi-4.1.6-orca-macos-blog.txt').split('\n').slice(1).join('\n');
    const v5 = sample('mpirun-version/openmpi-5.0.9-nccl-notes-partial.txt');
    expect(parseMpirunVersion(v4)).toBe('4.1.6');
    expect(parseMpirunVersion(v5)).toBe('5.0.9');
    expect(parseErrorOf(() => parseMpirunVersion('HYDRA build details:\n    Version:                                 4.2.0\n')).reason).toBe(
      'this mpirun is MPICH (HYDRA), not Open MPI',
    );
    expect(parseErrorOf(() => parseMpirunVersion('sh: 1: mpirun: not found\n')).reason).toMatch(/^no "mpirun \(Open MPI\) <version>" line/);
    fuzzParser(parseMpirunVersion, [v4, v5]);
  });
});

describe('node facts in the record, the certificate and the comparison CSV (simulated lab)', () => {
  it("every fact per node, each node's NCCL from its own rank (nccl-tests' from rank 0); two batches on different NIC firmware differ in the CSV", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'cq-facts-'));
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    const runs: string[] = [];
    s.nodes[1]!['ncclVersion'] = '2.30.7+cuda13.0'; // spark-b built another NCCL than spark-a
    for (const fw of [undefined, '28.46.1006 (MT_0000001221)']) {
      s.name = fw ? 'firmware-updated' : 'firmware-as-shipped';
      if (fw) s.nodes[1]!['nicFirmware'] = fw;
      writeFileSync(join(dir, `${s.name}.json`), JSON.stringify(s));
      const r = await runCli(['run', '--sim', join(dir, `${s.name}.json`), '--protocol', 'quick', '--out', join(dir, 'out'), '--json']);
      runs.push((JSON.parse(r.out) as { runDir: string }).runDir);
    }
    const rec = JSON.parse(readFileSync(join(runs[0]!, 'record.json'), 'utf8')) as { nodes: Record<string, unknown>[] };
    expect(rec.nodes[0]).toMatchObject({
      kernel: '6.17.0-1032-nvidia',
      osRelease: 'NVIDIA DGX Spark (simulated), DGX OS 7.5.0 (installed 7.2.3); Ubuntu 24.04.3 LTS',
      driver: 'mlx5_core 6.17.0-1032-nvidia',
      firmware: '28.45.4028 (MT_0000001221)',
      perftestVersion: '6.22',
      gpuDriverVersion: '580.95.05',
      cudaVersion: '13.0',
      ncclVersion: '2.28.9+cuda13.0',
      ncclTestsVersion: '2.18.3',
      dmi: expect.objectContaining({ biosVersion: 'simulated, virtual time' }),
    });
    expect(rec.nodes[1]).not.toHaveProperty('ncclTestsVersion');
    expect(rec.nodes[1]).toMatchObject({
      firmware: '28.45.4028 (MT_0000001221)',
      perftestVersion: '6.22',
      gpuDriverVersion: '580.95.05',
      ncclVersion: '2.30.7+cuda13.0',
    });
    const html = readFileSync(join(runs[0]!, 'setup-check.html'), 'utf8');
    expect(html).toContain('28.45.4028 (MT_0000001221)');
    expect(html).toContain('mlx5_core 6.17.0-1032-nvidia');
    // The software table: GPU driver, CUDA (driver), NCCL, nccl-tests, Open MPI, perftest, ethtool per node.
    expect(html).toContain(
      '<tr><td>spark-a</td><td>580.95.05</td><td>13.0</td><td>2.28.9+cuda13.0</td><td>2.18.3</td><td>4.1.6</td><td>6.22</td><td>6.7</td></tr>',
    );
    expect(html).toContain('<tr><td>spark-b</td><td>580.95.05</td><td>13.0</td><td>2.30.7+cuda13.0</td><td>—</td><td>4.1.6</td><td>6.22</td><td>6.7</td></tr>');

    const out = join(dir, 'compare.csv');
    const cmp = await runCli(['compare', ...runs, '--out', out]);
    expect(cmp.code, cmp.err).toBe(0);
    const rows = csvObjects(readFileSync(out, 'utf8'));
    expect(rows.map((r) => [r.nodes, r.nic_firmware])).toEqual(
      expect.arrayContaining([
        ['spark-a / spark-b', '28.45.4028 (MT_0000001221) / 28.45.4028 (MT_0000001221)'],
        ['spark-a / spark-b', '28.45.4028 (MT_0000001221) / 28.46.1006 (MT_0000001221)'],
      ]),
    );
    for (const r of rows) {
      expect(r.perftest_version).toBe('6.22 / 6.22');
      expect(r.nccl_version).toBe('2.28.9+cuda13.0 / 2.30.7+cuda13.0');
      expect(r.gpu_driver_version).toBe('580.95.05 / 580.95.05');
      expect(r.cuda_version).toBe('13.0 / 13.0');
      expect(r.openmpi_version).toBe('4.1.6 / 4.1.6');
      expect(r.bios_version).toBe('simulated, virtual time / simulated, virtual time');
    }
  });
});
