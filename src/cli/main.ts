import yargs from 'yargs';
import { PARSERS } from '../probes/registry.js';
import { EXIT } from './exit-codes.js';
import { ArgvError, describeFailure } from './failure.js';
import { HANGUP_MODES, processIo, type CliIo, type HangupMode } from './io.js';
import { intArg, positiveArg, refuseRepeated } from './options.js';
import { parseCommand } from './parse-command.js';
import { preflightCommand, runCommand } from './run-command.js';
import { gradeCommand } from './grade-command.js';
import { statusCommand } from './status-command.js';
import { cleanupCommand } from './cleanup-command.js';
import { scenariosCommand } from './sim-command.js';
import { simServeCommand } from './sim-serve-command.js';
import { compareCommand, keygenCommand, regressCommand, reportCommand, verifyCommand } from './report-commands.js';

// The composition root: the only place that wires real dependencies; returns the exit code.
export async function main(argv: string[], io: CliIo = processIo()): Promise<number> {
  let code: number = EXIT.ok;
  const signal = io.signal ?? new AbortController().signal;
  const base = yargs(argv);
  const parser = base
    .scriptName('cablequal')
    .usage('$0 <command> [options]\n\nBurn-in qualification of 200G cables between DGX Spark nodes.')
    .strict()
    .middleware((args) => refuseRepeated(args, (base as unknown as { getOptions(): { key: Record<string, unknown>; array: string[] } }).getOptions()), true)
    .demandCommand(1, 'name a command (see --help)')
    .command(
      'parse <kind> <file>',
      'parse one recorded command output and print what cablequal reads from it (JSON)',
      (y) =>
        y
          .positional('kind', { type: 'string', choices: Object.keys(PARSERS), demandOption: true })
          .positional('file', { type: 'string', describe: 'file, or - for stdin', demandOption: true }),
      async (args) => {
        // yargs hands a lone `-` positional over as '' : both mean standard input.
        code = await parseCommand(args.kind, args.file === '' ? '-' : args.file, io);
      },
    )
    .command(
      'run',
      'qualify one cable: benchmarks and the burn-in on two nodes (or on the simulated lab with --sim)',
      (y) =>
        y
          .option('sim', { type: 'string', describe: 'run on the built-in simulated lab with this scenario (see `cablequal sim scenarios`)' })
          .option('sim-fault', {
            type: 'string',
            array: true,
            describe: 'inject a fault into the simulated lab, e.g. ssh-drop@900s, node-reboot@1200s, garbage-output@300s',
          })
          .option('seed', { type: 'string', describe: 'simulator seed, a whole number (same seed, same journal)', coerce: intArg('seed', 0, 2 ** 32 - 1) })
          .option('nodes', {
            type: 'string',
            describe: 'the two nodes, as ssh hosts or aliases: a,b or a:0,b:1 (cage per node); with --sim, names the simulated nodes and their cages',
          })
          .option('port', { type: 'string', describe: 'cage (QSFP port) of the cable: 0, 1 or auto (the cage whose two rails are Up)', default: undefined })
          .option('protocol', { type: 'string', describe: 'built-in protocol name (spark-burnin, quick) or a protocol file', default: 'spark-burnin' })
          .option('label', { type: 'string', describe: 'label of the cable (else its EEPROM serial names the report folder)' })
          .option('out', { type: 'string', describe: 'reports directory', default: 'reports' })
          .option('json', { type: 'boolean', describe: 'print one JSON object on stdout', default: false })
          .option('accept-new-host-keys', {
            type: 'boolean',
            describe: 'trust unknown SSH host keys on first use (StrictHostKeyChecking=accept-new)',
            default: false,
          })
          .option('ssh-config', { type: 'string', describe: 'ssh config file to read instead of ~/.ssh/config (e.g. the one `sim serve` writes)' })
          .option('break-lock', {
            type: 'boolean',
            describe: 'take over a STALE node lock left by a dead run (a live lock is never broken; see cablequal cleanup)',
            default: false,
          })
          .option('dry-run', {
            type: 'boolean',
            describe: 'print every command the run would execute on each node, in order (sudo marked); only read-only discovery runs on real nodes',
            default: false,
          })
          .option('on-hangup', {
            type: 'string',
            choices: HANGUP_MODES,
            default: 'continue',
            describe: 'when the terminal or SSH session closes (SIGHUP): continue (find the run again with cablequal status) or abort (stop cleanly, ABORTED)',
          })
          .option('db', {
            type: 'string',
            describe: 'results store: postgres://... shared by several controllers (default <out>/cablequal.db, or $CABLEQUAL_DB; off: none)',
          })
          .option('metrics-port', {
            type: 'string',
            describe: 'serve live Prometheus/OpenMetrics metrics on this port (/metrics)',
            coerce: intArg('metrics-port', 0, 65535),
          })
          .option('metrics-host', { type: 'string', describe: 'address for --metrics-port', default: '127.0.0.1' })
          .option('speed', {
            type: 'string',
            describe: 'time speed-up against simulated nodes served by `cablequal sim serve --speed N` (the same N; refused against real nodes)',
            coerce: positiveArg('speed', 1000),
          }),
      async (args) => {
        code = await runCommand(
          {
            ...(args.db !== undefined ? { db: args.db } : {}),
            ...(args.metricsPort !== undefined ? { metricsPort: args.metricsPort } : {}),
            metricsHost: args.metricsHost,
            ...(args.speed !== undefined ? { speed: args.speed } : {}),
            ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
            breakLock: args.breakLock,
            dryRun: args.dryRun,
            onHangup: args.onHangup as HangupMode,
            ...(args.sim !== undefined ? { sim: args.sim } : {}),
            ...(args.simFault ? { simFault: args.simFault.map(String) } : {}),
            ...(args.seed !== undefined ? { seed: args.seed } : {}),
            ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
            ...(args.port !== undefined ? { port: String(args.port) } : {}),
            protocol: args.protocol,
            ...(args.label !== undefined ? { label: args.label } : {}),
            out: args.out,
            json: args.json,
            acceptNewHostKeys: args.acceptNewHostKeys,
          },
          io,
          signal,
        );
      },
    )
    .command(
      'preflight',
      'check both nodes are ready (tools, rails Up at 200G, RS-FEC, addresses, sudo for ethtool -m) without loading anything',
      (y) =>
        y
          .option('sim', { type: 'string', describe: 'check the simulated lab instead' })
          .option('nodes', { type: 'string', describe: 'the two nodes: a,b or a:0,b:1' })
          .option('port', { type: 'string', describe: 'cage: 0, 1 or auto' })
          .option('protocol', { type: 'string', default: 'spark-burnin' })
          .option('out', { type: 'string', default: 'reports' })
          .option('json', { type: 'boolean', default: false })
          .option('accept-new-host-keys', { type: 'boolean', default: false })
          .option('ssh-config', { type: 'string', describe: 'ssh config file to read instead of ~/.ssh/config' }),
      async (args) => {
        code = await preflightCommand(
          {
            ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
            ...(args.sim !== undefined ? { sim: args.sim } : {}),
            ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
            ...(args.port !== undefined ? { port: String(args.port) } : {}),
            protocol: args.protocol,
            out: args.out,
            json: args.json,
            acceptNewHostKeys: args.acceptNewHostKeys,
          },
          io,
          signal,
        );
      },
    )
    .command(
      'grade <runDirs..>',
      "rebuild each run's record from its journal (a killed run becomes ABORTED; --protocol re-grades with other limits)",
      (y) =>
        y
          .positional('runDirs', { type: 'string', array: true, demandOption: true })
          .option('protocol', { type: 'string', describe: 'grade with the limits of this protocol file instead of the recorded one' })
          .option('rules', { type: 'number', describe: "grade with this version of the grading rules (default: today's; 1 = cablequal 0.1.0)" })
          .option('json', { type: 'boolean', default: false, describe: 'one JSON object per run, one per line' }),
      async (args) => {
        code = await gradeCommand(
          {
            runDirs: args.runDirs.map(String),
            ...(args.protocol ? { protocol: args.protocol } : {}),
            ...(args.rules !== undefined ? { rules: args.rules } : {}),
            json: args.json,
          },
          io,
        );
      },
    )
    .command(
      'status',
      'list the runs under a reports directory that are going on, or that died without ending (phase, time, nodes, pid)',
      (y) =>
        y.option('out', { type: 'string', default: 'reports', describe: 'reports directory to look in' }).option('json', { type: 'boolean', default: false }),
      async (args) => {
        code = await statusCommand({ out: args.out, json: args.json }, io);
      },
    )
    .command(
      'cleanup',
      "after a controller died: stop its run's processes on the nodes (found by their run marker) and release its node locks",
      (y) =>
        y
          .option('nodes', { type: 'string', demandOption: true, describe: 'the nodes to clean: a,b (or a:0,b:1 as run --nodes takes)' })
          .option('ssh-config', { type: 'string', describe: 'ssh config file to read instead of ~/.ssh/config' })
          .option('accept-new-host-keys', { type: 'boolean', default: false }),
      async (args) => {
        code = await cleanupCommand(
          { nodes: args.nodes, ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}), acceptNewHostKeys: args.acceptNewHostKeys },
          io,
        );
      },
    )
    .command(
      'report <runDir>',
      're-render the certificate (or run report) and CSVs of a run from its journal',
      (y) =>
        y
          .positional('runDir', { type: 'string', demandOption: true })
          .option('protocol', { type: 'string', describe: 'grade with the limits of this protocol file' }),
      async (args) => {
        code = await reportCommand({ runDir: args.runDir, ...(args.protocol ? { protocol: args.protocol } : {}) }, io);
      },
    )
    .command(
      'keygen [dir]',
      "create the lab's Ed25519 key that signs certificates (default ~/.config/cablequal/lab-key.pem or $CABLEQUAL_LAB_KEY)",
      (y) => y.positional('dir', { type: 'string' }),
      async (args) => {
        code = await keygenCommand({ ...(args.dir ? { dir: args.dir } : {}) }, io);
      },
    )
    .command(
      'verify <certificate>',
      'check a certificate.json: signature, journal hash, and the verdict re-graded from the journal',
      (y) =>
        y
          .positional('certificate', { type: 'string', demandOption: true })
          .option('public-key', { type: 'string', describe: 'trusted lab public key (PEM) to pin the signer' }),
      async (args) => {
        code = await verifyCommand({ certificate: args.certificate, ...(args.publicKey ? { publicKey: args.publicKey } : {}) }, io);
      },
    )
    .command(
      'compare <runs..>',
      'one CSV row per run (and a per part-number summary) for run directories or reports/*/*',
      (y) => y.positional('runs', { type: 'string', array: true, demandOption: true }).option('out', { type: 'string', default: 'compare.csv' }),
      async (args) => {
        code = await compareCommand({ runs: args.runs.map(String), out: args.out }, io);
      },
    )
    .command(
      'regress <runs..>',
      'compare runs of a reference cable with its baseline run; non-zero exit on a regression',
      (y) =>
        y
          .positional('runs', { type: 'string', array: true, demandOption: true })
          .option('baseline', { type: 'string', demandOption: true })
          .option('junit', { type: 'string', describe: 'write JUnit XML here (one test case per metric)' })
          .option('protocol', { type: 'string', describe: 'take the regression tolerances from this protocol file' }),
      async (args) => {
        code = await regressCommand(
          {
            baseline: args.baseline,
            runs: args.runs.map(String),
            ...(args.junit ? { junit: args.junit } : {}),
            ...(args.protocol ? { protocol: args.protocol } : {}),
          },
          io,
        );
      },
    )
    // BATCH-COMMAND (cablequal batch registers here)
    .command(
      'batch',
      'qualify a box of cables one after another (one queue per node pair); resumable; batch.csv and batch.html',
      (y) =>
        y
          .option('manifest', { type: 'string', demandOption: true, describe: 'CSV: label[,pn][,serial][,scenario]' })
          .option('nodes', { type: 'string', describe: 'the two nodes of the bench: a,b or a:0,b:1' })
          .option('pair', { type: 'string', array: true, describe: 'one bench per --pair (a:0,b:1); several run concurrently' })
          .option('port', { type: 'string', describe: 'cage: 0, 1 or auto' })
          .option('protocol', { type: 'string', default: 'spark-burnin' })
          .option('golden', { type: 'string', describe: 'EEPROM serial of the reference cable: runs first and last; drift marks the batch ERROR' })
          .option('golden-protocol', { type: 'string', describe: 'protocol of the golden runs (e.g. quick)' })
          .option('auto-detect', { type: 'boolean', default: false, describe: 'unattended: poll for the cable swap, no keyboard' })
          .option('reboot', {
            type: 'string',
            choices: ['auto', 'manual'],
            default: 'auto',
            describe:
              'after each swap the nodes need a reboot with the cable in: auto (sudo systemctl reboot --no-block) or manual (you are told when; the batch waits for both boot ids to change)',
          })
          .option('resume', { type: 'boolean', default: false, describe: 'continue the batch in --out with the next untested cable' })
          .option('sim', { type: 'string', describe: 'simulated box: comma list or file of scenario[=SERIAL], or "manifest" for its scenario column' })
          .option('seed', { type: 'string', describe: 'simulator seed, a whole number', coerce: intArg('seed', 0, 2 ** 32 - 1) })
          .option('out', { type: 'string', describe: 'batch directory (default reports/batch-<manifest name>)' })
          .option('accept-new-host-keys', { type: 'boolean', default: false })
          .option('dry-run', {
            type: 'boolean',
            default: false,
            describe: "print, per pair, every command one cable's run executes on each node; nothing runs but read-only discovery",
          })
          .option('ssh-config', { type: 'string', describe: 'ssh config file to read instead of ~/.ssh/config (e.g. the one `sim serve` writes)' })
          .option('on-hangup', {
            type: 'string',
            choices: HANGUP_MODES,
            default: 'continue',
            describe: 'when the terminal or SSH session closes (SIGHUP): continue or abort',
          })
          .option('db', {
            type: 'string',
            describe: 'results store: postgres://... (default cablequal.db beside the batch directory, or $CABLEQUAL_DB; off: none)',
          })
          .option('metrics-port', {
            type: 'string',
            describe: 'serve live Prometheus/OpenMetrics metrics on this port (/metrics)',
            coerce: intArg('metrics-port', 0, 65535),
          })
          .option('metrics-host', { type: 'string', describe: 'address for --metrics-port', default: '127.0.0.1' }),
      async (args) => {
        const { batchCommand } = await import('./batch-command.js');
        code = await batchCommand(
          {
            ...(args.db !== undefined ? { db: args.db } : {}),
            ...(args.metricsPort !== undefined ? { metricsPort: args.metricsPort } : {}),
            metricsHost: args.metricsHost,
            manifest: args.manifest,
            ...(args.nodes !== undefined ? { nodes: args.nodes } : {}),
            ...(args.pair ? { pair: args.pair.map(String) } : {}),
            ...(args.port !== undefined ? { port: String(args.port) } : {}),
            protocol: args.protocol,
            ...(args.goldenProtocol ? { goldenProtocol: args.goldenProtocol } : {}),
            ...(args.golden ? { golden: args.golden } : {}),
            autoDetect: args.autoDetect,
            reboot: args.reboot as 'auto' | 'manual',
            resume: args.resume,
            ...(args.sim !== undefined ? { sim: args.sim } : {}),
            ...(args.seed !== undefined ? { seed: args.seed } : {}),
            ...(args.out ? { out: args.out } : {}),
            acceptNewHostKeys: args.acceptNewHostKeys,
            dryRun: args.dryRun,
            ...(args.sshConfig ? { sshConfig: args.sshConfig } : {}),
            onHangup: args.onHangup as HangupMode,
          },
          io,
          signal,
        );
      },
    )
    // STORE-COMMANDS (the results store and its dashboard)
    .command('db', "the lab's results store (SQLite file in --out, or PostgreSQL with --db)", (y) =>
      y
        .command(
          'import <paths..>',
          "index run directories (reports/, a batch, 'reports/*/*') into the store from their records and journals; idempotent",
          (yy) =>
            yy
              .positional('paths', { type: 'string', array: true, demandOption: true })
              .option('out', { type: 'string', describe: 'reports directory holding cablequal.db', default: 'reports' })
              .option('db', { type: 'string', describe: 'postgres://... (or $CABLEQUAL_DB) instead of <out>/cablequal.db' }),
          async (args) => {
            const { dbImportCommand } = await import('../store/db-command.js');
            code = await dbImportCommand({ paths: args.paths.map(String), out: args.out, ...(args.db !== undefined ? { db: args.db } : {}) }, io);
          },
        )
        .demandCommand(1, 'name a db command: import'),
    )
    .command(
      'dashboard',
      "serve the lab's dashboard and JSON API (read-only) from the results store",
      (y) =>
        y
          .option('out', { type: 'string', describe: 'reports directory (its cablequal.db, and the certificates served)', default: 'reports' })
          .option('db', { type: 'string', describe: 'postgres://... (or $CABLEQUAL_DB) instead of <out>/cablequal.db' })
          .option('port', { type: 'string', describe: 'TCP port (0 = a free one)', default: '8080', coerce: intArg('port', 0, 65535) })
          .option('host', {
            type: 'string',
            describe: 'address to bind (the dashboard has no login: keep it on loopback unless the network is trusted)',
            default: '127.0.0.1',
          })
          .option('serve-journals', {
            type: 'boolean',
            describe: "also serve each run's journal.jsonl (certificates, run reports and CSVs are always served; the store never)",
            default: false,
          }),
      async (args) => {
        const { dashboardCommand } = await import('../dashboard/dashboard-command.js');
        code = await dashboardCommand(
          { out: args.out, ...(args.db !== undefined ? { db: args.db } : {}), port: args.port ?? 8080, host: args.host, serveJournals: args.serveJournals },
          io,
          signal,
        );
      },
    )
    .command('sim', 'the simulated lab', (y) =>
      y
        .command(
          'scenarios',
          "list the simulated lab's scenarios and their expected outcomes",
          (yy) => yy,
          async () => {
            code = await scenariosCommand(io);
          },
        )
        .command(
          'serve',
          'serve both simulated nodes over real SSH on 127.0.0.1, in real time (optionally sped up)',
          (yy) =>
            yy
              .option('scenario', { type: 'string', demandOption: true })
              .option('sim-fault', { type: 'string', array: true })
              .option('port', {
                type: 'string',
                describe: 'first SSH port (0 = random; the second node gets the next one)',
                default: '0',
                coerce: intArg('port', 0, 65534),
              })
              .option('speed', {
                type: 'string',
                describe: 'speed-up factor of simulated time, above 0, at most 1000 (give the same --speed to `cablequal run`)',
                default: '1',
                coerce: positiveArg('speed', 1000),
              })
              .option('seed', {
                type: 'string',
                describe: 'simulator seed, a whole number (the same scenario and seed as `run --sim` give the same verdict)',
                coerce: intArg('seed', 0, 2 ** 32 - 1),
              })
              .option('dir', { type: 'string', describe: 'where to write keys, known_hosts and ssh config', default: '.cablequal-sim' }),
          async (args) => {
            code = await simServeCommand(
              {
                scenario: args.scenario,
                faults: (args.simFault ?? []).map(String),
                port: args.port ?? 0,
                speed: args.speed ?? 1,
                dir: args.dir,
                ...(args.seed !== undefined ? { seed: args.seed } : {}),
              },
              io,
            );
          },
        )
        .demandCommand(1, 'name a sim command: scenarios or serve'),
    )
    // Stop at the first problem: a command never runs with arguments yargs found wrong.
    .fail((msg, err) => {
      // yargs wraps what a coerce function throws in its own YError: that is a usage problem too.
      if (err && err.name !== 'YError') throw err;
      throw new ArgvError(err?.message ?? msg ?? 'bad usage');
    })
    .help()
    .version(false)
    .wrap(Math.min(110, process.stdout.columns ?? 100));
  try {
    await parser.parseAsync();
  } catch (e) {
    // Bad input and a full disk are one line and an exit code; anything else is a bug (exit 70, with its stack).
    const failure = describeFailure(e);
    if (!failure) throw e;
    io.stderr(`cablequal: ${failure.text}\n`);
    return failure.code;
  }
  return code;
}
