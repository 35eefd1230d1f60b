// A soak reads a running ib_write_bw's rows as they come (#21 item 1): perftest fflush()es each row before its newline,
// so the freshest row is read whole without one, and a line caught half written waits for the next read. The text is
// the recorded DGX Spark client (samples/ib_write_bw/dgx-spark-playbooks-client1-rocep1s0f0-run-infinitely.txt),
// cut the ways a read of the running program can find it.
import { describe, expect, it } from 'vitest';
import { linkLoadRows, type LinkLoad } from '../../src/run/steps/link-load.js';
import type { RemoteProcess } from '../../src/transport/types.js';
import { sample } from '../helpers/samples.js';

const TEXT = sample('ib_write_bw/dgx-spark-playbooks-client1-rocep1s0f0-run-infinitely.txt');
const proc = (stdout: string): RemoteProcess => ({
  name: 'soak-loaded-client-0',
  pid: 1,
  done: new Promise(() => undefined),
  output: async () => ({ stdout, stderr: '' }),
  stop: async () => undefined,
});
const rowsOf = async (stdout: string) => {
  const load: LinkLoad = { streams: [{ rail: 0, from: 'spark-a', to: 'spark-b', device: 'rocep1s0f0', server: proc(''), client: proc(stdout) }], startedS: 0 };
  return (await linkLoadRows(load))[0]!;
};

describe('reading a running ib_write_bw', () => {
  it('every recorded row, the last one also when its newline is not yet printed', async () => {
    expect((await rowsOf(TEXT)).gbps).toEqual([92.57, 92.57, 92.57, 92.56, 92.57]);
    expect((await rowsOf(TEXT.replace(/\n$/, ''))).gbps).toEqual([92.57, 92.57, 92.57, 92.56, 92.57]);
  });

  it('a last row caught half written is left for the next read; the rows before it are read', async () => {
    const half = TEXT.slice(0, TEXT.lastIndexOf(' 65536') + 20);
    expect(half.endsWith('\n')).toBe(false);
    const r = await rowsOf(half);
    expect(r.gbps).toEqual([92.57, 92.57, 92.57, 92.56]);
    expect(r.error).toBeUndefined();
  });

  it('before the first row: no row, and why', async () => {
    const head = TEXT.slice(0, TEXT.indexOf(' 65536'));
    const r = await rowsOf(head);
    expect(r.gbps).toEqual([]);
    expect(r.error).toMatch(/result/);
  });
});
