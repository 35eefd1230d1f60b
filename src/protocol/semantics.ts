// What a JSON Schema cannot say about a protocol: the order its phases must run in (what each phase needs from an
// earlier one, as src/run/qualify.ts runs them), and the limits the numbers put on each other.
import type { Limit } from '../domain/limit.js';
import { GPU_BURN_KERNEL, gpuBurnKernel } from './gpu-load.js';
import type { Phase, ProgramLoad, ProtocolCommands } from './types.js';

// One problem: the field at fault and what it must be.
export interface SemanticProblem {
  path: string;
  expected: string;
  got?: unknown;
}

// The most samples per node a protocol may take (sum of sampled durations / samplingIntervalS): at 1.3 kB of journal
// and about 3.3 kB of grading memory per two-node tick (BENCHMARKS.md: 57 MB and 220 MB for 42,500 ticks), 300,000
// ticks are about 400 MB of journal and 1 GB to grade: a 72-h soak at 1 Hz, or 8 h at 10 Hz.
export const MAX_TICKS = 300_000;

// What each phase kind needs to have run before it: preflight finds the cage and rail addresses every later step
// uses; identity reads the EEPROM and starts the sampling a soak is graded on; ib_write_bw's sum is graded only when
// a loopback before it showed every rail fine (else a throttled NIC would pass as a slow cable).
const NEEDS: Partial<Record<Phase['kind'], { kind: Phase['kind']; why: string }>> = {
  soak: { kind: 'identity', why: 'sampling starts when identity has read the EEPROM' },
  ib_write_bw: { kind: 'loopback', why: 'its sum is graded only when loopback showed every rail fine' },
};

// Phase order: preflight first and once, identity at most once, each phase after what it needs, at least one soak.
export function phaseOrderProblems(phases: readonly Phase[]): SemanticProblem[] {
  const out: SemanticProblem[] = [];
  phases.forEach((p, i) => {
    const at = `phases[${i}].kind`;
    if (i === 0 && p.kind !== 'preflight')
      out.push({ path: at, expected: '"preflight" first (every later phase uses the cage and rail addresses it finds)', got: p.kind });
    if (i > 0 && p.kind === 'preflight') out.push({ path: at, expected: 'preflight once, as the first phase', got: p.kind });
    if (p.kind === 'identity' && phases.slice(0, i).some((q) => q.kind === 'identity'))
      out.push({ path: at, expected: 'identity once (sampling starts there)', got: p.kind });
    const need = NEEDS[p.kind];
    if (need && !phases.slice(0, i).some((q) => q.kind === need.kind))
      out.push({ path: at, expected: `${/^[aeiou]/.test(need.kind) ? 'an' : 'a'} ${need.kind} phase before ${p.kind} (${need.why})`, got: p.kind });
  });
  if (!phases.some((p) => p.kind === 'soak'))
    out.push({ path: 'phases', expected: 'at least one soak phase (the cable is graded on its soaks)', got: phases.map((p) => p.kind).join(',') });
  return out;
}

// Windows at least one sampling interval long, and no more samples than a controller can journal and grade.
// `pathOf` names where a limit came from in the file (a default limit has no place of its own).
export function samplingProblems(phases: readonly Phase[], limits: readonly Limit[], intervalS: number, pathOf: (rule: string) => string): SemanticProblem[] {
  const out: SemanticProblem[] = [];
  for (const l of limits) {
    const w = l.params?.['windowS'];
    if (w !== undefined && w < intervalS)
      out.push({ path: `${pathOf(l.rule)}.windowS`, expected: `a window of at least one sampling interval (${intervalS} s)`, got: w });
  }
  const sampledS = phases.reduce((s, p) => s + (p.kind === 'loopback' || p.kind === 'ib_write_bw' || p.kind === 'soak' ? p.durationS : 0), 0);
  const ticks = Math.ceil(sampledS / intervalS);
  if (ticks > MAX_TICKS) {
    out.push({
      path: 'samplingIntervalS',
      expected: `at most ${MAX_TICKS} samples per node (load phases ${sampledS} s / samplingIntervalS): raise samplingIntervalS or shorten the soaks`,
      got: ticks === Infinity ? 'no limit' : `${intervalS} (${ticks} samples)`,
    });
  }
  return out;
}

// gpu_burn reads its run length from the first argument after its options and treats ANY argument containing "-h",
// "-l" or "-d" as help, list or doubles (a substring test, gpu_burn-drv.cpp main()): refuse what would not load the GPUs.
function gpuBurnProblems(g: ProgramLoad, path: string): SemanticProblem[] {
  const out: SemanticProblem[] = [];
  const last = g.args[g.args.length - 1];
  if (last !== '{durationS}')
    out.push({ path: `${path}.args`, expected: 'gpu_burn\'s run length "{durationS}" as the last argument (gpu_burn reads it after its options)', got: last });
  g.args.forEach((a, i) => {
    for (const [flag, what] of [
      ['-h', 'prints its help'],
      ['-l', 'lists the GPUs'],
      ['-d', 'switches to doubles'],
    ] as const) {
      if (a.includes(flag) && a !== flag)
        out.push({ path: `${path}.args[${i}]`, expected: `no "${flag}" inside an argument (gpu_burn ${what} when any argument contains it)`, got: a });
      if (a === flag && flag !== '-d')
        out.push({ path: `${path}.args[${i}]`, expected: `not "${flag}" (gpu_burn ${what} and exits without loading the GPUs)`, got: a });
    }
  });
  const kernel = gpuBurnKernel(g.args);
  if (!kernel.startsWith('/') && g.cwd === undefined) {
    out.push({
      path: `${path}.args`,
      expected: `-c <absolute path of ${GPU_BURN_KERNEL}> or a "cwd" holding it (gpu_burn looks for its compare kernel "${kernel}" in its working directory, and the run's scratch directory never has it)`,
      got: g.args,
    });
  }
  return out;
}

// Programs that run program text given as an argument, and the options that take it: a shell's -c (alone or in a
// cluster: -lc, -ec), python's -c, perl's and ruby's -e, node's -e/-p/--eval, php's -r, ... "Nothing in a protocol
// file runs as shell syntax on a node": a GPU load or preflight check naming one of these with such an option (also
// behind a launcher: docker run IMAGE sh -c ..., env bash -c ...) is refused. A script file on the node stays possible
// (python3 /opt/load/matmul.py {durationS}): its text is the node's, not the protocol's.
const CODE_OPTIONS: [RegExp, RegExp][] = [
  [/^(?:sh|bash|rbash|dash|ash|zsh|ksh|mksh|pdksh|yash|csh|tcsh|fish|elvish|xonsh|nu|busybox|toybox)$/, /^(?:-[A-Za-z]*c[A-Za-z]*|--command(?:=.*)?)$/],
  [/^(?:python|pypy)[0-9.]*$/, /^-[A-Za-z]*c[A-Za-z]*$/],
  [/^(?:perl|ruby|jruby)[0-9.]*$/, /^-[A-Za-z]*[eE][A-Za-z]*$/],
  [/^(?:node|nodejs|deno|bun|qjs)$/, /^(?:-[A-Za-z]*[ep][A-Za-z]*|--eval(?:=.*)?|--print(?:=.*)?|eval)$/],
  [/^(?:php)[0-9.]*$/, /^(?:-[A-Za-z]*r[A-Za-z]*|--run)$/],
  [/^(?:lua|luajit|julia|Rscript|osascript|tclsh|wish)[0-9.]*$/, /^(?:-[A-Za-z]*e[A-Za-z]*|--eval(?:=.*)?)$/],
  [/^(?:pwsh|powershell)$/, /^-(?:c|command|encodedcommand|ec|e)$/i],
];
// Programs whose ordinary arguments are program text (awk's program, sed's e command) or a command for a remote shell.
const CODE_ALWAYS = /^(?:[gmn]?awk|sed|gsed|ssh|rsh)$/;

// The program words of a GPU load or check (argv, or the words of an older one-line form) that would run protocol
// text as code: "sh" then "-c", "awk" anywhere.
export function codeProblems(argv: readonly string[], path: string): SemanticProblem[] {
  const base = (w: string) =>
    w
      .replace(/^['"]+|['"]+$/g, '')
      .split('/')
      .pop() ?? '';
  for (let i = 0; i < argv.length; i++) {
    const name = base(argv[i]!);
    if (CODE_ALWAYS.test(name))
      return [
        {
          path,
          expected: `a program that does not run program text from its arguments ("${name}" does: nothing in a protocol runs as code on a node)`,
          got: argv.join(' '),
        },
      ];
    const opts = CODE_OPTIONS.find(([prog]) => prog.test(name))?.[1];
    const flag = opts ? argv.slice(i + 1).find((a) => opts.test(base(a))) : undefined;
    if (flag !== undefined)
      return [
        {
          path,
          expected: `no interpreter given program text ("${name} ${flag}": nothing in a protocol runs as shell syntax or code on a node; put the code in a script file on the node and give its path, e.g. python3 /opt/cablequal/gpu-load.py {durationS})`,
          got: argv.join(' '),
        },
      ];
  }
  return [];
}

// The commands' parts that must agree: nccl's {ranks} with ncclRank, and a gpu_burn load that would load the GPUs.
export function commandProblems(c: ProtocolCommands): SemanticProblem[] {
  const out: SemanticProblem[] = [];
  // The per-node form: nccl holds {ranks} exactly once and ncclRank says what one node's app context is.
  const ranks = (c.nccl.match(/\{ranks\}/g) ?? []).length;
  if (c.ncclRank !== undefined && ranks !== 1)
    out.push({ path: 'commands.nccl', expected: 'exactly one {ranks} (where the per-node app contexts of commands.ncclRank go)', got: c.nccl });
  if (c.ncclRank === undefined && ranks > 0) out.push({ path: 'commands.ncclRank', expected: 'a value (required key when commands.nccl uses {ranks})' });
  if (c.ncclRank !== undefined && /\{(?:ipA|ipB|netdevA|hcaList)\}/.test(c.nccl))
    out.push({
      path: 'commands.nccl',
      expected: "no {ipA}, {ipB}, {netdevA} or {hcaList} beside {ranks} (each node's names go in commands.ncclRank)",
      got: c.nccl,
    });
  if (c.gpuLoad.form === 'program' && c.gpuLoad.program.split('/').pop() === 'gpu_burn') out.push(...gpuBurnProblems(c.gpuLoad, 'commands.gpuLoad'));
  const g = c.gpuLoad;
  out.push(...codeProblems(g.form === 'line' ? g.line.trim().split(/\s+/) : [g.program, ...g.args], 'commands.gpuLoad'));
  if (g.form === 'program' && g.check) out.push(...codeProblems(g.check, 'commands.gpuLoad.check'));
  return out;
}
