import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { WatchEvent } from '../../src/watch/events.js';
import { runCli } from '../helpers/cli.js';

const tmp = () => mkdtempSync(join(tmpdir(), 'cq-watch-'));
const lines = (text: string) =>
  text
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as WatchEvent | { type: 'tick'; atS: number });

describe('cablequal watch (in process, simulated lab in virtual time)', () => {
  it('--json: one JSON event a line; the clone raises its lane alarm before the drop; the journal holds the same events and every tick; exit 1', async () => {
    const out = tmp();
    const r = await runCli(['watch', '--sim', 'test/fixtures/scenarios/service-clone-early.json', '--for', '1.2h', '--json', '--out', out]);
    expect(r.err).toBe('');
    expect(r.code).toBe(1);
    const events = lines(r.out) as WatchEvent[];
    expect(events[0]).toMatchObject({ type: 'start', resumed: false, intervalS: 10, cables: [{ cable: 'spark-a:1--spark-b:1', serial: 'ONT2403150288' }] });
    expect(events.at(-1)).toMatchObject({ type: 'end', reason: '--for 1.2h passed' });
    const drop = events.findIndex((e) => e.type === 'link-down');
    const alarm = events.findIndex((e) => e.type === 'alarm' && e.rule === 'lane-ratio');
    expect(alarm).toBeGreaterThan(0);
    expect(alarm).toBeLessThan(drop);
    expect(events[alarm]).toMatchObject({ serial: 'ONT2403150288', node: 'spark-b', lane: 2 });
    const journal = lines(readFileSync(join(out, 'watch', 'watch.jsonl'), 'utf8'));
    expect(journal.filter((l) => l.type !== 'tick')).toEqual(events);
    // 432 ticks; the first reading of the counters is the baseline of the intervals that follow
    expect(journal.filter((l) => l.type === 'tick')).toHaveLength(Math.round((1.2 * 3600) / 10) - 1);
    // each tick keeps the counters as read: consecutive readings differ by the interval's counts (no reset here)
    type Tick = { type: 'tick'; receivers: { node: string; laneErrors: number[]; counters: Record<string, string | string[]> }[] };
    const b = (journal.filter((l) => l.type === 'tick') as unknown as Tick[]).map((t) => t.receivers.find((x) => x.node === 'spark-b')!);
    expect(Object.keys(b[0]!.counters)).toEqual(
      expect.arrayContaining(['rx_err_lane_N_phy', 'rx_corrected_bits_phy', 'rx_crc_errors_phy', 'link_down_events_phy']),
    );
    for (let i = 1; i < 50; i++) {
      const [p, c] = [b[i - 1]!.counters['rx_err_lane_N_phy'] as string[], b[i]!.counters['rx_err_lane_N_phy'] as string[]];
      expect(c.map((v, l) => Number(BigInt(v) - BigInt(p[l]!)))).toEqual(b[i]!.laneErrors);
    }
  });

  it('without --json: a short line per event, the serial, node and lane in the alarm line; cut to the width on a terminal', async () => {
    const r = await runCli(['watch', '--sim', 'test/fixtures/scenarios/service-clone-early.json', '--for', '0.1h', '--out', tmp()], { tty: { columns: 90 } });
    const out = r.out.trim().split('\n');
    expect(out.every((l) => l.length <= 90)).toBe(true);
    expect(out.some((l) => l.length === 90 && l.endsWith('…'))).toBe(true);
    expect(out.find((l) => l.includes('ALARM'))).toMatch(/^\d\d:\d\d:\d\d ALARM MARGINAL lane-ratio ONT2403150288 spark-b cage 1 lane 2/);
  });

  it('a watcher started again on its --out resumes: one origin, resumed start, alarms and drops carried; a line cut by a kill is left out and said', async () => {
    const out = tmp();
    const first = await runCli(['watch', '--sim', 'test/fixtures/scenarios/service-clone-early.json', '--for', '1.2h', '--json', '--out', out]);
    const before = lines(first.out) as WatchEvent[];
    const path = join(out, 'watch', 'watch.jsonl');
    // SIGKILL in the middle of a line: the journal ends with half a tick line.
    writeFileSync(path, `${readFileSync(path, 'utf8')}{"type":"tick","atS":57`);
    const second = await runCli(['watch', '--sim', 'test/fixtures/scenarios/service-clone-early.json', '--for', '10m', '--json', '--out', out]);
    expect(second.err).toMatch(/^cablequal watch: .*watch\.jsonl: 1 line\(s\) cut short by a kill left out; resuming\n$/);
    const after = lines(second.out) as WatchEvent[];
    expect(after[0]).toMatchObject({ type: 'start', resumed: true });
    // seconds since the first start go on (the second lab's clock starts later than the first one ended)
    expect(after[0]!.atS).toBeGreaterThan(before.at(-1)!.atS);
    // the drop of the first watch is counted on: the status carries it, nothing is raised again for it
    const status = after.find((e) => e.type === 'status');
    expect(status).toMatchObject({ resets: 1 });
    // the alarms still raised when the first watcher stopped are not raised again (until cleared)
    const key = (e: WatchEvent) => ('rule' in e ? `${e.node}|${e.rule}|${e.lane}|${e.grade}` : '');
    const raised = new Set<string>();
    for (const e of before) if (e.type === 'alarm') raised.add(key(e));
    for (const e of before) if (e.type === 'clear') for (const g of ['MARGINAL', 'FAIL']) raised.delete(key({ ...e, grade: g as 'FAIL' }));
    expect(raised.size).toBeGreaterThan(0);
    const firstClear = after.findIndex((e) => e.type === 'clear');
    const again = after.slice(0, firstClear < 0 ? undefined : firstClear).filter((e) => e.type === 'alarm' && raised.has(key(e)));
    expect(again).toEqual([]);
    const journal = readFileSync(path, 'utf8').trim().split('\n');
    expect(journal.filter((l) => l.includes('"type":"start"'))).toHaveLength(2);
    // another cable in the same cages starts afresh
    const third = lines((await runCli(['watch', '--sim', 'in-service-good', '--for', '5m', '--json', '--out', out])).out) as WatchEvent[];
    expect(third.find((e) => e.type === 'status')).toMatchObject({ serial: 'MT2412VS01741', resets: 0, alarms: 0 });
  });

  it('in-service-good: events, no alarm, no drop, exit 0', async () => {
    const r = await runCli(['watch', '--sim', 'in-service-good', '--for', '1h', '--json', '--out', tmp()]);
    expect(r.code).toBe(0);
    const types = new Set((lines(r.out) as WatchEvent[]).map((e) => e.type));
    expect([...types].sort()).toEqual(['end', 'start', 'status']);
  });

  it('--metrics-port: served while the watch goes on (said on stderr), closed at its end', async () => {
    const r = await runCli(['watch', '--sim', 'in-service-good', '--for', '5m', '--metrics-port', '0', '--db', 'off', '--out', tmp()]);
    expect(r.code).toBe(0);
    const url = /^cablequal: metrics at (http:\/\/127\.0\.0\.1:\d+\/metrics)\n$/.exec(r.err)?.[1];
    expect(url).toBeDefined();
    await expect(fetch(url!)).rejects.toThrow();
  });

  it('bad usage: one line, exit 2, before anything is read', async () => {
    for (const [argv, msg] of [
      [['watch'], /^cablequal: watch: give --nodes a,b\[,c\.\.\.\] \(or --sim <scenario>\)\n$/],
      [
        ['watch', '--sim', 'in-service-good', '--for', '3x'],
        /^cablequal: --for: expected a duration such as 90s, 30m, 24h or 7d \(at most 366d\), got "3x"\n$/,
      ],
      [['watch', '--nodes', 'a,b', '--sim-fault', 'ssh-drop@10s'], /^cablequal: watch: --sim-fault and --seed apply to the simulated lab only \(--sim\)\n$/],
      [['watch', '--nodes', 'a'], /^cablequal: --nodes: a cable joins two nodes: name at least two, got 1\n$/],
      [['watch', '--sim', 'in-service-good', '--interval', '0'], /^cablequal: --interval: expected a whole number from 1 to 600, got "0"\n/],
    ] as const) {
      const r = await runCli([...argv, '--out', tmp()]);
      expect(r.err, argv.join(' ')).toMatch(msg);
      expect(r.code).toBe(2);
    }
  });
});
