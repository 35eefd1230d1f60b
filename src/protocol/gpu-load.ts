// The GPU load of a protocol: what it starts on a node, and what must be on the node for it to start.
import type { GpuLoad } from './types.js';
import { renderCommand } from './template.js';

// The compare kernel gpu_burn loads when no -c is given, from its working directory (gpu_burn-drv.cpp COMPARE_KERNEL;
// builds since 2025 name it compare.fatbin).
export const GPU_BURN_KERNEL = 'compare.ptx';

// The compare kernel gpu_burn will open for these arguments: the word after the last argument starting with "-c"
// (gpu_burn tests strncmp(arg, "-c", 2)), else its default name.
export function gpuBurnKernel(args: readonly string[]): string {
  let kernel = GPU_BURN_KERNEL;
  args.forEach((a, i) => {
    if (a.startsWith('-c') && args[i + 1] !== undefined) kernel = args[i + 1]!;
  });
  return kernel;
}

// A program load with its placeholders filled: the argument vector the node runs.
export interface StartSpec {
  program: string;
  args: string[];
  cwd?: string;
}

// Fill {durationS} into each argument of a program load, or render the one-line template of the older form.
export function renderGpuLoad(load: GpuLoad, durationS: number): StartSpec | { line: string } {
  if (load.form === 'line') return { line: renderCommand(load.line, { durationS }) };
  const args = load.args.map((a) => a.replaceAll('{durationS}', String(durationS)));
  return { program: load.program, args, ...(load.cwd !== undefined ? { cwd: load.cwd } : {}) };
}

// A file the load needs before it can start, and why (the preflight message names both).
export interface Requirement {
  path: string;
  why: string;
}

function join(dir: string, file: string): string {
  return file.startsWith('/') ? file : `${dir.replace(/\/+$/, '')}/${file}`;
}

// What preflight proves on each node: the program on the PATH (or at its path), its working directory, the files it
// needs (the protocol's `requires` and, for gpu_burn, the compare kernel it will open) and the protocol's check.
export function gpuLoadNeeds(load: GpuLoad): { program: string; cwd: string | null; files: Requirement[]; check: string[] | null; problem: string | null } {
  if (load.form === 'line') {
    const words = load.line.trim().split(/\s+/);
    const program = words[0]!;
    const isBurn = program.split('/').pop() === 'gpu_burn';
    const kernel = isBurn ? gpuBurnKernel(words.slice(1)) : null;
    // Started in the run's scratch directory, a relative compare kernel is never there.
    const problem =
      kernel !== null && !kernel.startsWith('/')
        ? `the protocol's gpuLoad "${load.line}" starts gpu_burn in the run's scratch directory, where its compare kernel "${kernel}" never is: the GPUs would stay idle`
        : null;
    return { program, cwd: null, files: kernel?.startsWith('/') ? [{ path: kernel, why: "gpu_burn's compare kernel" }] : [], check: null, problem };
  }
  const files: Requirement[] = load.requires.map((p) => ({ path: p, why: "listed in the protocol's gpuLoad.requires" }));
  if (load.program.split('/').pop() === 'gpu_burn') {
    const kernel = join(load.cwd ?? '', gpuBurnKernel(load.args));
    if (!files.some((f) => f.path === kernel)) files.push({ path: kernel, why: "gpu_burn's compare kernel (-c, or compare.ptx in its cwd)" });
    else files.find((f) => f.path === kernel)!.why = "gpu_burn's compare kernel";
  }
  return { program: load.program, cwd: load.cwd ?? null, files, check: load.check ?? null, problem: null };
}
