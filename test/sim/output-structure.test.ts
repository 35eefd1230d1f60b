// Every kind of output the simulated lab produces, held line by line against real outputs of that kind (samples/,
// first line of each: where it was recorded) or, where none was found, against the documented format (the tool's
// source or manual, cited). Values and names become placeholders (template()), so what is compared is the layout:
// the same headers, the same line templates, the same separators (TABs where the samples keep them). A drift in a
// simulated format fails here instead of surprising a parser on a node. The lab's outputs are generated.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SCENARIOS_DIR } from '../../src/sim/scenario.js';
import { cmd, ipAddrCommand } from '../../src/transport/commands.js';
import { RESULT_HEADER_GBITS } from '../../src/sim/format-perftest.js';
import { layout, missingInOrder, outputLines, realLines, separators, template, type TemplateOptions } from '../helpers/line-shape.js';
import { sample } from '../helpers/samples.js';
import { NCCL_CMD, newLab, startLinkLoad } from './drive.js';

const IF = 'enp1s0f1np1';

// Names of netdevs, RDMA devices and hosts seen in the samples and the lab: the same placeholder for all.
const NAMES: TemplateOptions['names'] = Object.fromEntries([
  ...['enp1s0f0np0', 'enp1s0f1np1', 'enP2p1s0f0np0', 'enP2p1s0f1np1', 'swp1', 'enp65s0f0np0', 'eth0', 'eni8np1'].map((n) => [n, 'if']),
  ...['rocep1s0f0', 'rocep1s0f1', 'roceP2p1s0f0', 'roceP2p1s0f1', 'mlx5_0', 'mlx5_3'].map((n) => [n, 'dev']),
]);

// The checks of one kind of output: the lab's lines (blank lines the tool prints are layout too, so they must be
// allowed explicitly) against the templates of the real samples and of the documented lines.
function holdAgainst(
  sim: string[],
  opts: {
    samples: string[]; // real outputs of this kind (any variant): a simulated line must look like one of their lines
    documented?: string[]; // lines no sample holds, written as the documentation gives them (cited at the call)
    reference?: string[]; // lines of a real output of the same variant: all of them must appear, in order
    tabs?: string[]; // lines of samples kept verbatim (TABs included): a simulated line of the same template has the same blanks
    indentOnly?: boolean; // compare only the indentation (when the template hides values of different layouts)
    prepare?: (line: string) => string; // kind-specific normalising applied to both sides before template()
    drop?: RegExp; // lines of the samples that are not the tool's output (prose, prompts)
  },
): void {
  const prep = opts.prepare ?? ((l: string) => l);
  const t = (l: string) => template(prep(l), { names: NAMES });
  const realTemplates = new Set([...opts.samples.flatMap((s) => realLines(s, opts.drop ? { drop: opts.drop } : {})), ...(opts.documented ?? [])].map(t));
  const unknown = sim.filter((l) => !realTemplates.has(t(l)));
  expect(unknown, 'simulated lines of a shape no real output of this kind has').toEqual([]);
  if (opts.reference) expect(missingInOrder(sim.map(t), opts.reference.map(t)), 'a real line missing from the simulated output').toBeNull();
  for (const real of opts.tabs ?? []) {
    const twin = sim.find((l) => t(l) === t(real));
    const seps = (l: string) => (opts.indentOnly ? separators(l).slice(0, /^\s/.test(l) ? 1 : 0) : layout(prep(l), { names: NAMES }));
    if (twin !== undefined) expect(seps(twin), `separators of "${twin}"`).toEqual(seps(real));
  }
}

// Lines of a sample kept with their TABs (for the separator comparison); a sample whose source line says it keeps
// the TABs as published is verbatim throughout.
const tabLines = (rel: string) => realLines(rel).filter((l) => l.includes('\t'));
const verbatim = (rel: string, drop?: RegExp) => realLines(rel, drop ? { drop } : {});

// Lines of NVIDIA's harness around the perftest output in the ngc_multinode_perf sample.
const HARNESS_LINES = /^(ngc_rdma_test\.sh|INFO: )/;

describe('output structure of the simulated lab against real outputs', () => {
  it('ethtool -S: header and 5-blank counter lines as mlx5 prints them, *_phy names in the driver order', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(cmd.ethtoolStats(IF))).stdout);
    const annotated = (l: string) => l.replace(/ {2}#.*$/, ''); // the phy-section sample's author comments
    holdAgainst(sim, {
      samples: ['ethtool-stats/cx4-ubuntu1804-ethtool-i-and-S-head-partial.txt', 'ethtool-stats/mlx5-100g-annotated-phy-section-lane3-errors.txt'],
      prepare: (l) => annotated(l).replace(/^( {5})[a-z0-9_]+: /, '$1<counter>: '),
      drop: /^(driver|version|firmware-version|expansion-rom-version|bus-info|supports-[a-z-]+):/,
    });
    expect(sim[0]).toBe('NIC statistics:');
    for (const l of sim.slice(1)) expect(l).toMatch(/^ {5}[a-z0-9_]+: \d+$/);
    // The counters of the real mlx5 phy section, in its order; the head of the software counters as in the cx4 dump.
    const names = (ls: string[]) => ls.map((l) => annotated(l).trim().split(':')[0]!);
    const realPhy = names(realLines('ethtool-stats/mlx5-100g-annotated-phy-section-lane3-errors.txt'));
    expect(names(sim).filter((n) => realPhy.includes(n))).toEqual(realPhy);
    expect(missingInOrder(names(sim), ['rx_packets', 'rx_bytes', 'tx_packets', 'tx_bytes', 'tx_tso_packets', 'tx_tso_bytes'])).toBeNull();
  });

  it('ethtool <if>: the lines of the real tail, TAB-indented, the rest as ethtool netlink/settings.c prints them', async () => {
    const { lab } = newLab('good-qsfp56');
    const r = lab.runner('spark-a');
    const key = (l: string) =>
      /^\s+\d+base\S+\/(Full|Half)$/.test(l) ? '<link mode continuation>' : l.replace(/^[ \t]+([A-Z][^:]*:)(?: .*)?$/, '\t$1 <value>');
    // Lines of settings.c (ETHTOOL) no sample holds: the header, the Supported-side lines, Wake-on (root only),
    // the message level (8 blanks, then 31 blanks before the class names) and the non-root notice (docs/formats.md §3).
    const documented = [
      'Settings for enp1s0f1np1:',
      '\tSupported ports: [ FIBRE ]',
      '\tSupported link modes:   100000baseCR4/Full',
      '\tSupported pause frame use: Symmetric',
      '\tSupports auto-negotiation: Yes',
      '\tSupported FEC modes: None\t RS\t BASER',
      '\tSupports Wake-on: d',
      '\tWake-on: d',
      '        Current message level: 0x00000004 (4)',
      '                               link',
      '\tLink Down Events: 0',
      'netlink error: Operation not permitted',
    ];
    const tail = realLines('ethtool-link/ethtool-lanes-patch-example-100g-4-lanes-partial.txt');
    for (const [command, up] of [
      [`sudo -n ethtool ${IF}`, true],
      [`ethtool ${IF} 2>&1`, true],
      ['sudo -n ethtool enp1s0f0np0', false],
    ] as const) {
      const sim = outputLines((await r.run(command)).stdout);
      holdAgainst(sim, {
        samples: ['ethtool-link/ethtool-lanes-patch-example-100g-4-lanes-partial.txt', 'ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt'],
        documented,
        prepare: key,
        ...(up ? { reference: tail.map((l) => l.replace(/^ {8}(?=Advertised)/, '\t')) } : {}),
        tabs: [
          ...tabLines('ethtool-link/ethtool-lanes-patch-example-100g-4-lanes-partial.txt'),
          ...tabLines('ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt'),
        ],
        indentOnly: true, // the values differ (Spark vs the patch example's device); the TAB indent does not
      });
    }
    const speed = outputLines((await r.run(`sudo -n ethtool ${IF}`)).stdout).find((l) => l.includes('Speed'));
    expect(speed).toBe(realLines('ethtool-link/dgx-spark-playbooks-switch-speed-200g-both-functions.txt')[0]);
  });

  it('ethtool --show-fec and -I --show-fec: the Spark lines; statistics in the ethtool 6.7 layout (docs/formats.md §2)', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    await clock.sleep(10_000);
    const r = lab.runner('spark-a');
    const fecSamples = [
      'ethtool-fec/spark-fb97-show-fec-auto-none-direct-dac.txt',
      'ethtool-fec/spark-fb97-set-fec-rs-then-show.txt',
      'ethtool-fec/ethtool-5.13-fec-stats-per-lane-netdevsim-mock.txt',
    ];
    const spark = ['ethtool-fec/spark-fb97-show-fec-auto-none-direct-dac.txt', 'ethtool-fec/spark-fb97-set-fec-rs-then-show.txt'];
    // Without -I: nothing but lines of the two real Spark outputs.
    holdAgainst(outputLines((await r.run(`ethtool --show-fec ${IF}`)).stdout), { samples: spark, prepare: (l) => l.replace(/^ # .*/, '') });
    holdAgainst(outputLines((await r.run('ethtool --show-fec enp1s0f0np0')).stdout), { samples: spark });
    // With -I: mlx5 in RS mode gives totals only; corrected_bits is not in the mock sample (docs/formats.md §2, ethtool 6.7).
    holdAgainst(outputLines((await r.run(cmd.ethtoolFec(IF))).stdout), {
      samples: fecSamples,
      documented: ['  corrected_bits: 0'],
      drop: /^ # /,
      reference: ['Statistics:', '  corrected_blocks: 0', '  uncorrectable_blocks: 0'],
    });
  });

  it('ethtool -m decoded: ethtool 6.7 labels of the real SFF-8636 and CMIS outputs, TAB + 41-column label + " : "', async () => {
    const label = (l: string) => {
      const m = /^\s*(.+?)\s+: /.exec(l);
      return m ? `${m[1]} :` : l;
    };
    const sff = [
      'ethtool-module/qsfp28-25g-dac-ice-decoded-old-labels-partial.txt',
      'ethtool-module/qsfp28-dac-oem-3m-new-ethtool-labels-attenuation-bug.txt',
      'ethtool-module/spark-dac-amphenol-njaakk-n911-400g-class-selected-lines-en.txt',
    ];
    const cmis = [
      'ethtool-module/cmis-qsfpdd-mcp1660-w00ae30-passive-copper-prerelease-patch.txt',
      'ethtool-module/cmis-qsfpdd-optical-arista-xdr4-ethtool6x-partial.txt',
    ];
    for (const [scenario, samples, reference] of [
      ['good-qsfp56', sff, 'ethtool-module/qsfp28-25g-dac-ice-decoded-old-labels-partial.txt'],
      ['good-qsfp112', sff, 'ethtool-module/spark-dac-amphenol-njaakk-n911-400g-class-selected-lines-en.txt'],
      ['marginal-qsfp112', cmis, null],
    ] as const) {
      const { lab } = newLab(scenario);
      const sim = outputLines((await lab.runner('spark-a').run(cmd.ethtoolModule(IF))).stdout);
      holdAgainst(sim, {
        samples: [...samples],
        prepare: label,
        drop: /^\s*\.+$|^[0-9]\S* degrees F$|^8X Pluggable/,
        ...(reference ? { reference: realLines(reference, { drop: /^\s*\.+$/ }) } : {}),
      });
      for (const l of sim) expect(l).toMatch(/^\t.{41} : \S/);
      // The samples show ethtool's TAB as 4 or 8 blanks, or none: the " : " column after the indent is the same.
      for (const s of samples)
        for (const l of realLines(s, { drop: /^\s*\.+$|degrees F$|^8X Pluggable/ })) expect(l.trimStart().indexOf(' : '), `${s}: ${l}`).toBe(41);
    }
  });

  it('ethtool -m hex: dump_hex rows as the real dumps and offset reads lay them out (TABs as the SFP dump keeps them)', async () => {
    const { lab } = newLab('good-qsfp56');
    const r = lab.runner('spark-a');
    const hexRow = (l: string) => l.replace(/\b[0-9a-f]{2}\b/g, 'hh').replace(/^0x[0-9a-f]{4}:/, '<off>:');
    const hexSamples = [
      'ethtool-module-hex/sfp-mikrotik-aoc-amd-xgbe-512B-hex.txt',
      'ethtool-module-hex/qsfp28-dac-ice-patched-offset-0x90-reads.txt',
      'ethtool-module-hex/qsfp28-dac-ice-unpatched-lower-page-hex-fallback-and-offset-reads.txt',
    ];
    const sfpTabs = verbatim('ethtool-module-hex/sfp-mikrotik-aoc-amd-xgbe-512B-hex.txt');
    for (const command of [
      cmd.eepromLower(IF),
      cmd.eepromUpper(IF),
      `sudo -n ethtool -m ${IF} offset 0x90 length 12`,
      `sudo -n ethtool -m ${IF} offset 0x90 length 8`,
      `sudo -n ethtool -m ${IF} hex on`,
    ]) {
      const sim = outputLines((await r.run(command)).stdout);
      holdAgainst(sim, { samples: hexSamples, prepare: hexRow, drop: /^(patched|unpatched) driver:$/, tabs: sfpTabs });
    }
    expect(
      outputLines((await r.run(`sudo -n ethtool -m ${IF} offset 0x90 length 12`)).stdout)
        .map(hexRow)
        .map((l) => template(l)),
    ).toEqual(
      realLines('ethtool-module-hex/qsfp28-dac-ice-patched-offset-0x90-reads.txt', { drop: /^patched/ })
        .slice(3, 6)
        .map(hexRow)
        .map((l) => template(l)),
    );
  });

  it('ib_write_bw client, server, loopback and --run_infinitely: the lines of the real perftest outputs, TABs as perftest prints them', async () => {
    const { lab, clock } = newLab('good-qsfp56');
    const ibSamples = [
      'ib_write_bw/dgx-spark-playbooks-client1-rocep1s0f0-run-infinitely.txt',
      'ib_write_bw/dgx-spark-playbooks-client2-roceP2p1s0f0-run-infinitely.txt',
      'ib_write_bw/cx5-roce-100g-client-bidir-D5-report-gbits.txt',
      'ib_write_bw/ngc-multinode-perf-issue108-bidir-D30-q2-cmdlines-and-header-partial.txt',
      'ib_write_bw/spark-hotplug-degraded-single-rail-1MiB-5000-iters.txt',
      'ib_write_bw/promaxgb10-client-single-rail-q4-rdmacm-report-gbits.txt',
    ];
    const dev = (l: string) => l.replace(/(Device\s*: )\S+/, '$1<dev>');
    const tabs = [
      ...verbatim('ib_write_bw/spark-hotplug-degraded-single-rail-1MiB-5000-iters.txt'),
      ...verbatim('ib_write_bw/ngc-multinode-perf-issue108-bidir-D30-q2-cmdlines-and-header-partial.txt', HARNESS_LINES),
    ];
    // The server's banner: docs/formats.md §5 ("the server prints a starred banner `* Waiting for client to connect... *`").
    const documented = ['', '************************************', '* Waiting for client to connect... *'];
    const check = (text: string, reference?: string[]) =>
      holdAgainst(outputLines(text), {
        samples: ibSamples,
        documented,
        prepare: dev,
        drop: new RegExp(`${HARNESS_LINES.source}|^(ib_write_bw|mpirun|Conflicting CPU)`),
        tabs,
        ...(reference ? { reference } : {}),
      });
    // --run_infinitely, one direction: every line of the real Spark client, in order.
    const srv = await lab
      .runner('spark-b')
      .start('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely', { runDir: '/tmp/cq', name: 'srv' });
    await clock.sleep(1_000); // the server listens once it has opened its device
    const cli = await lab
      .runner('spark-a')
      .start('ib_write_bw -d rocep1s0f1 -p 18515 -F --report_gbits -s 65536 --run_infinitely 192.168.100.11', { runDir: '/tmp/cq', name: 'cli' });
    await clock.sleep(31_000); // six rows, as many as the real client shows
    check((await cli.output()).stdout, realLines('ib_write_bw/dgx-spark-playbooks-client2-roceP2p1s0f0-run-infinitely.txt'));
    for (const p of [cli, srv]) await p.stop();
    check((await srv.done).stdout);
    // Both directions on both rails (the protocol's link load), servers included.
    const load = await startLinkLoad(lab);
    await clock.sleep(11_000);
    for (const p of load) check((await p.output()).stdout);
    for (const p of load) await p.stop();
    // Loopback -D 10 on one node: the row and the closing line come at exit.
    const lbSrv = await lab.runner('spark-a').start('ib_write_bw -d rocep1s0f1 -p 18600 -F --report_gbits -s 65536 -D 10', { runDir: '/tmp/cq', name: 'lb' });
    await clock.sleep(1_000);
    const lb = await lab.runner('spark-a').run('ib_write_bw -d rocep1s0f1 -p 18600 -F --report_gbits -s 65536 -D 10 192.168.100.10');
    check(lb.stdout);
    check((await lbSrv.done).stdout);
    expect(outputLines(lb.stdout).slice(-3)).toEqual([RESULT_HEADER_GBITS, expect.stringMatching(/^ 65536 /), '-'.repeat(87)]);
  });

  it('nccl all_reduce_perf: the header, table and footer of nccl-tests and the NCCL_DEBUG lines of the real Spark run', async () => {
    const { lab } = newLab('good-qsfp56');
    const out = (await lab.runner('spark-a').run(NCCL_CMD)).stdout;
    const host = (l: string) =>
      l
        .replace(/^[\w.-]+:\d+:\d+ \[\d+\] NCCL INFO /, '<host>:<pid> NCCL INFO ')
        .replace(/ on +[\w.-]+ device /, ' on <host> device ')
        .replace(/\b(all_reduce_perf|all_gather_perf)\b/, '<collective>')
        .replace(/\b(sum|none)\b/, '<redop>');
    holdAgainst(outputLines(out), {
      samples: [
        'nccl/spark-fb97-all-gather-perf-1G-4G-rdma-ok.txt',
        'nccl/spark-fb97-nccl-debug-init-net-excerpt.txt',
        'nccl/oci-a100-2node-all-reduce-1G-4G.txt',
        'nccl/dgx-spark-playbooks-pr103-all-reduce-8K-8G-first-run-head-partial.txt',
      ],
      prepare: host,
      drop: /^(mpirun|\s+-|\s+\.\/build|Authorization required|SLURM_|mprg@)/,
      reference: realLines('nccl/spark-fb97-all-gather-perf-1G-4G-rdma-ok.txt', { drop: /^(mpirun|\s+-|\s+\.\/build|Authorization required|mprg@)/ }).filter(
        (l) => l.startsWith('#'),
      ),
    });
    // The banner lines keep their trailing blanks as nccl-tests pads them (the Spark paste kept them).
    const padded = realLines('nccl/spark-fb97-all-gather-perf-1G-4G-rdma-ok.txt').filter((l) => / $/.test(l));
    for (const l of padded.filter((x) => !/Avg bus/.test(x))) expect(outputLines(out)).toContain(l);
  });

  it('ibdev2netdev: the lines of the real Spark output, in C collation', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(cmd.ibdev2netdev())).stdout);
    expect(sim).toEqual(realLines('ibdev2netdev/dgx-spark-playbooks-connect-two-sparks-port1.txt'));
    holdAgainst(sim, { samples: ['ibdev2netdev/dgx-spark-playbooks-perfguide-spark1.txt'] });
  });

  it('rdma link: no real sample is in samples/ (docs/formats.md §7 keeps one aside); the documented line, iproute2 state names', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run('rdma link show')).stdout);
    // docs/formats.md §7: `link rocep1s0f0/1 state ACTIVE physical_state LINK_UP netdev enp1s0f0np0`; iproute2 rdma/link.c
    // names the other states (DOWN, ...) and physical states (DISABLED, ...) and ends each field with a blank.
    const state = (l: string) => l.replace(/state (ACTIVE|DOWN) physical_state (LINK_UP|DISABLED) /, 'state <s> physical_state <p> ');
    holdAgainst(sim, { samples: [], documented: ['link rocep1s0f0/1 state ACTIVE physical_state LINK_UP netdev enp1s0f0np0 '], prepare: state });
    expect(sim.filter((l) => l.includes('ACTIVE'))).toHaveLength(2);
  });

  it('nvidia-smi --query-gpu: the real GB10 lines for the same queries', async () => {
    const { lab } = newLab('good-qsfp56');
    const r = lab.runner('spark-a');
    const noheader = outputLines((await r.run('nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader')).stdout);
    holdAgainst(noheader, { samples: ['nvidia-smi/gb10-query-name-memtotal-driver-noheader.txt'], drop: /^(nvidia-smi|Docker|Expected)/ });
    const withHeader = outputLines(
      (await r.run('nvidia-smi --query-gpu=name,memory.total,memory.free,memory.used,temperature.gpu,power.draw --format=csv')).stdout,
    );
    const real = realLines('nvidia-smi/gb10-query-memory-na-curriculum-quote.txt');
    expect(withHeader[0]!.startsWith(real[0]!.replace(', ...', ''))).toBe(true); // the author elided the last names
    expect(template(withHeader[1]!)).toBe(template(real[1]!));
    // What the sampler asks (index, name, utilization, temperature, power; no header, no units): same field layout.
    const sampler = outputLines((await r.run(cmd.nvidiaSmi())).stdout);
    expect(sampler.map((l) => template(l))).toEqual(['<n>, NVIDIA GB10, <n>, <n>, <n>']);
  });

  it('hwmon: `grep -H .` lines path:value as the real mlx5 hwmon sysfs read shows them', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(cmd.hwmon())).stdout);
    const attr = (l: string) => l.replace(/^>+ ?/, '').replace(/^(\/sys\/class\/hwmon\/hwmon)\d+\/(name|temp\d+_label|temp\d+_input):.*$/, '$1<n>/$2:<value>');
    const real = sample('other/mlx5-hwmon-sysfs-v1-patch-review-quoted.txt')
      .split('\n')
      .filter((l) => /\/sys\/class\/hwmon\//.test(l) && !/\$ grep/.test(l));
    const allowed = new Set(real.map(attr).map((l) => l.replace(/temp\d+_/, 'temp1_')));
    for (const l of sim) expect(allowed, l).toContain(attr(l));
  });

  it('ip -o -4 addr: no real sample and not in docs/formats.md: the iproute2 one-line layout (ip/ipaddress.c)', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(ipAddrCommand(IF))).stdout);
    // iproute2 print_addrinfo with -o: "%d: %-8s" ifindex and name, "    inet %s/%d", " brd %s", " scope global",
    // the label, then the continuation joined by "\" (oneline) and "       valid_lft forever preferred_lft forever".
    holdAgainst(sim, {
      samples: [],
      documented: ['6: enp1s0f1np1    inet 192.168.100.10/24 brd 192.168.100.255 scope global enp1s0f1np1\\       valid_lft forever preferred_lft forever'],
    });
    expect(outputLines((await lab.runner('spark-a').run(ipAddrCommand('enp1s0f0np0'))).stdout)).toEqual([]); // no address on the empty cage
  });

  it('DMI: no real sample and not in docs/formats.md: one value per sysfs file, `grep -H .` gives path:value', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(cmd.dmi())).stdout);
    expect(sim.length).toBeGreaterThanOrEqual(6);
    for (const l of sim)
      expect(l).toMatch(/^\/sys\/class\/dmi\/id\/(sys_vendor|product_name|product_version|board_name|bios_vendor|bios_version|bios_date):[^\n]+$/);
  });

  it('ethtool -i: the driver-info keys of the real mlx5 paste, in its order (values differ: kernel, firmware, PSID)', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(cmd.ethtoolDriver(IF))).stdout);
    const rel = 'ethtool-stats/cx4-ubuntu1804-ethtool-i-and-S-head-partial.txt';
    const keysOnly = (l: string) => l.trimEnd().replace(/: .*$/, ': <v>');
    const drop = /^(#|NIC statistics:|\s)/;
    holdAgainst(sim, { samples: [rel], reference: realLines(rel, { drop }), prepare: keysOnly, drop });
  });

  it('sysfs identity, release files, perftest --version, reboot: `grep -H .` path:value lines and the documented one-liners', async () => {
    const { lab } = newLab('good-qsfp56');
    const ids = outputLines((await lab.runner('spark-a').run(cmd.netIdentity())).stdout);
    expect(ids.length).toBeGreaterThanOrEqual(16);
    for (const l of ids)
      expect(l).toMatch(
        /^(\/sys\/class\/net\/[^/]+\/(phys_port_name:p\d|device\/uevent:[A-Z_]+=\S+)|\/sys\/class\/infiniband\/[^/]+\/sys_image_guid:[0-9a-f]{4}(:[0-9a-f]{4}){3})$/,
      );
    for (const l of outputLines((await lab.runner('spark-a').run(cmd.osRelease())).stdout))
      expect(l).toMatch(/^\/etc\/(dgx-release|os-release):[A-Z0-9_]+=("[^"]*"|\S+)$/);
    // perftest_parameters.c: printf("Version: %s\n", user_param->version) for -V/--version.
    expect((await lab.runner('spark-a').run(cmd.perftestVersion())).stdout).toMatch(/^Version: \S+\n$/);
    expect(await lab.runner('spark-a').run(cmd.rebootAllowed())).toMatchObject({ stdout: '/usr/bin/systemctl reboot --no-block\n', exitCode: 0 });
  });

  it("nvidia-smi's default table: the lines of the recorded GB10 tables, in their order", async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(cmd.gpuVersions())).stdout);
    const idle = 'nvidia-smi/gb10-default-table-580.173.02-idle-P8.txt';
    // The weekday-month date line is the tool's; the table boxes must be the recorded ones.
    const date = (l: string) => l.replace(/^[A-Z][a-z]{2} [A-Z][a-z]{2} +\d+ [\d:]+ \d{4}\s*$/, '<date>');
    holdAgainst(
      sim.filter((l) => l !== ''),
      {
        samples: [idle, 'nvidia-smi/dgx-spark-7d19-default-table-580.95.05-partial.txt'],
        reference: realLines(idle),
        prepare: (l) =>
          date(l)
            .replace(/\b(P\d|On|Off)\b/g, '<state>')
            .replace(/\b\d+([CW%])/g, '<n>$1'),
      },
    );
    for (const real of realLines(idle).filter((l) => l.startsWith('|'))) expect(sim.map((l) => l.length)).toContain(real.length);
  });

  it('ldd and mpirun --version: glibc\'s TAB-indented lines, Open MPI\'s three lines; a library the scenario takes away is "not found"', async () => {
    const { lab } = newLab('good-qsfp56');
    const sim = outputLines((await lab.runner('spark-a').run(cmd.ldd('/usr/local/bin/all_reduce_perf'))).stdout);
    const shape = (l: string) =>
      l
        .replace(/^(\s*)\S+ => not found$/, '$1<lib> => not found')
        .replace(/^(\s*)\S+ => \S.* \((0x[0-9a-f]+)\)$/, '$1<lib> => <path> ($2)')
        .replace(/^(\s*)\S+ (\(0x[0-9a-f]+\))$/, '$1<lib> $2');
    const ldd = ['ldd/nccl-tests-issue107-all-reduce-perf-every-library-found.txt', 'ldd/openfoam-blockmesh-libmpi-not-found.txt'];
    holdAgainst(sim, { samples: ldd, prepare: shape, tabs: ldd.flatMap(tabLines), indentOnly: true });
    for (const l of sim) expect(l.startsWith('\t'), l).toBe(true);
    const v = (await lab.runner('spark-a').run(cmd.mpirunVersion())).stdout;
    expect(v.split('\n')).toEqual(sample('mpirun-version/openmpi-4.1.6-orca-macos-blog.txt').split('\n').slice(2));
    const s = JSON.parse(readFileSync(join(SCENARIOS_DIR, 'good-qsfp56.json'), 'utf8')) as { name: string; nodes: Record<string, unknown>[] };
    s.name = 'no-libnccl';
    s.nodes[1]!['missing'] = ['libnccl.so.2'];
    const file = join(mkdtempSync(join(tmpdir(), 'cq-ldd-')), 's.json');
    writeFileSync(file, JSON.stringify(s));
    const other = newLab(file).lab;
    const b = outputLines((await other.runner('spark-b').run(cmd.ldd('/usr/local/bin/all_reduce_perf'))).stdout);
    expect(b.filter((l) => l.includes('not found'))).toEqual(['\tlibnccl.so.2 => not found']);
    holdAgainst(b, { samples: ldd, prepare: shape, tabs: ldd.flatMap(tabLines), indentOnly: true });
  });
});
