import { describe, expect, it } from 'vitest';
import { stripLauncherPrefix } from '../../src/probes/launcher-prefix.js';
import { parseErrorOf } from '../helpers/parse-error.js';
import { sample } from '../helpers/samples.js';

// The prefix layer alone; the parsers' tests read the recorded prefixed samples (test/probes/nccl.test.ts).
describe('stripLauncherPrefix', () => {
  it('takes the srun label off every line of the recorded srun sample, bare labels included, and keeps the line count', () => {
    const text = sample('nccl/nccl-tests-issue290-h100-2node-srun-label.txt');
    const u = stripLauncherPrefix(text, 'nccl');
    expect(u.kind).toBe('srun --label');
    expect(u.lines).toHaveLength(text.split('\n').length);
    expect(u.lines[0]).toBe(
      '# nThread 1 nGpus 1 minBytes 8388608 maxBytes 8589934592 step: 2(factor) warmup iters: 5 iters: 200 agg iters: 1 validation: 0 graph: 0',
    );
    expect(u.lines.at(-2)).toBe(''); // " 0:" with nothing after it
    expect(new Set(u.ranks.slice(0, -1))).toEqual(new Set([0]));
  });

  it('leaves the untagged lines of mpirun itself alone and reads stderr tags', () => {
    const u = stripLauncherPrefix(sample('nccl/nccl-ebpf-rtx5090-2rank-all-reduce-mpirun-tag-output.txt'), 'nccl');
    expect(u.kind).toBe('mpirun --tag-output');
    expect(u.lines.slice(0, 8)).toEqual([
      'Authorization required, but no authorization protocol specified',
      '',
      'Authorization required, but no authorization protocol specified',
      '',
      'Authorization required, but no authorization protocol specified',
      '',
      'Authorization required, but no authorization protocol specified',
      '',
    ]);
    expect(u.ranks.slice(0, 8)).toEqual([null, null, null, null, 0, 0, 1, 1]);
  });

  it('takes the OpenMPI 5 (PRRTE) tag with its space and a CR line end of a bare label', () => {
    // Generated lines in the two documented shapes (no recorded OpenMPI 5 or CRLF paste was found).
    expect(stripLauncherPrefix('[1,3]<stdout>: #  Rank  0', 'nccl')).toEqual({ lines: ['#  Rank  0'], ranks: [3], kind: 'mpirun --tag-output' });
    expect(stripLauncherPrefix(' 12:\r\n 12: x', 'nccl')).toEqual({ lines: ['', 'x'], ranks: [12, 12], kind: 'srun --label' });
  });

  it('reads text without a prefix as it is', () => {
    const text = sample('nccl/oci-a100-2node-all-reduce-1G-4G.txt');
    const u = stripLauncherPrefix(text, 'nccl');
    expect(u.kind).toBeNull();
    expect(u.lines.join('\n')).toBe(text);
  });

  it('refuses a second launcher or a second job, naming the line', () => {
    const e = parseErrorOf(() => stripLauncherPrefix('0: a\n[1,0]<stdout>:b', 'nccl'));
    expect([e.line, e.reason]).toEqual([
      2,
      `mpirun --tag-output prefix "[1,0]<stdout>:", but line 1 started srun --label prefixes: paste one launcher's output`,
    ]);
    const j = parseErrorOf(() => stripLauncherPrefix('[1,0]<stdout>:a\n\n[3,0]<stdout>:b', 'nccl'));
    expect([j.line, j.reason]).toEqual([3, `mpirun job 3 in "[3,0]<stdout>:", but line 1 was job 1: paste one job's output`]);
  });
});
