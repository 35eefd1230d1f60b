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

// A soak reads each client every 10 s for up to an hour, and only what it printed since is parsed (the head of its
// output gives the unit): at every length its output can be read at, the rows and the error are what a fresh read of
// the whole output gives.
describe('reading a growing output: only what is new is parsed, the answer is a whole read`s', () => {
  const growing = (texts: string[]) => {
    let i = 0;
    const client: RemoteProcess = { ...proc(''), output: async () => ({ stdout: texts[i]!, stderr: '' }) };
    const load: LinkLoad = { streams: [{ rail: 0, from: 'spark-a', to: 'spark-b', device: 'rocep1s0f0', server: proc(''), client }], startedS: 0 };
    return async () => {
      const r = (await linkLoadRows(load))[0]!;
      i++;
      return r;
    };
  };
  const cuts = (text: string, step: number) =>
    Array.from({ length: Math.ceil(text.length / step) + 1 }, (_, k) => text.slice(0, Math.min(text.length, k * step)));

  it('the recorded Spark client read at every byte it can be cut at', async () => {
    const texts = cuts(TEXT, 1);
    const read = growing(texts);
    let rowsSeen = 0;
    for (const t of texts) {
      const [inc, whole] = [await read(), await rowsOf(t)];
      expect(inc, `cut at ${t.length}`).toEqual(whole);
      rowsSeen = Math.max(rowsSeen, inc.gbps.length);
    }
    expect(rowsSeen).toBe(5);
  });

  it('more rows than the recording (a long soak), then the client failing: the same rows, then the same error', async () => {
    const row = TEXT.split('\n').find((l) => l.startsWith(' 65536'))!;
    const long = TEXT + `${row}\n`.repeat(40);
    const broken = `${long}---------------------------------------------------------------------------------------\n Failed to complete run\n`;
    const texts = [...cuts(long, 37), ...cuts(broken, 11).filter((t) => t.length > long.length)];
    const read = growing(texts);
    for (const t of texts) expect(await read(), `cut at ${t.length}`).toEqual(await rowsOf(t));
    expect((await rowsOf(long)).gbps.length).toBe(45);
    // Issue #33: a line after the closing dashes is kept as a warning, never a reason to refuse the rows (the client's
    // exit and the row gaps are what a soak judges a failing client by).
    expect(await rowsOf(broken)).toMatchObject({ gbps: (await rowsOf(long)).gbps, warnings: ['Failed to complete run'] });
    expect((await rowsOf(broken)).error).toBeUndefined();
  });

  it('an output that does not grow from what was read (another text): read whole again', async () => {
    const other = TEXT.replace(/92\.57/g, '91.00');
    const read = growing([TEXT, other]);
    expect((await read()).gbps[0]).toBe(92.57);
    expect((await read()).gbps).toEqual((await rowsOf(other)).gbps);
  });
});

// Issue #33 item 1: a client of another build prints lines around its table; read as it grows, its rows and the lines
// the parser does not know are what a whole read gives, each unknown line once.
describe('reading a growing output of another build', () => {
  it('the constructed CUDA and ionic clients, with an unknown line after the table, read at every 7th byte', async () => {
    for (const f of [
      'ib_write_bw/constructed-cuda-integrated-client-gpu-buffer-lines-around-promaxgb10-table.txt',
      'ib_write_bw/constructed-ionic-build-connected-completed-total-run-time-tabs-cpufreq.txt',
    ]) {
      const text = `${sample(f)}Freeing resources\n`;
      let i = 0;
      const texts = Array.from({ length: Math.ceil(text.length / 7) + 1 }, (_, k) => text.slice(0, Math.min(text.length, k * 7)));
      const client: RemoteProcess = { ...proc(''), output: async () => ({ stdout: texts[i]!, stderr: '' }) };
      const load: LinkLoad = { streams: [{ rail: 0, from: 'spark-a', to: 'spark-b', device: 'rocep1s0f0', server: proc(''), client }], startedS: 0 };
      for (const t of texts) {
        expect((await linkLoadRows(load))[0], `${f} cut at ${t.length}`).toEqual(await rowsOf(t));
        i++;
      }
      expect(await rowsOf(text)).toMatchObject({ gbps: [111.61], warnings: ['Freeing resources'] });
      expect((await rowsOf(text.slice(0, -1))).warnings).toBeUndefined(); // still being written
    }
  });
});
