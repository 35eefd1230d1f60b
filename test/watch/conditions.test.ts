import { describe, expect, it } from 'vitest';
import type { IntervalDelta } from '../../src/analysis/counters.js';
import { loadProtocol } from '../../src/protocol/index.js';
import { AlarmBook } from '../../src/watch/alarms.js';
import { ReceiverConditions, type Condition } from '../../src/watch/conditions.js';
import { serviceSettingsOf } from '../../src/watch/settings.js';
import type { EventPlace } from '../../src/watch/events.js';

const settings = serviceSettingsOf(loadProtocol('protocols/spark-burnin.json'));
const delta = (laneErrors: number[], over: Partial<IntervalDelta> = {}): IntervalDelta => ({
  laneErrors,
  correctedBits: laneErrors.reduce((a, b) => a + b, 0),
  postFecErrors: 0,
  crcErrors: 0,
  symbolErrors: 0,
  linkDownEvents: 0,
  ...over,
});
const place = (atS: number): EventPlace => ({ cable: 'a:1--b:1', serial: 'SN1', node: 'b', cage: 1, atS, at: new Date(atS * 1000).toISOString() });

// GENERATED intervals of 10 s: each lane's errors per second as a function of time and temperature.
function feed(rc: ReceiverConditions, seconds: number, rates: (t: number, tempC: number) => number[], temp: (t: number) => number, from = 0): Condition[][] {
  const out: Condition[][] = [];
  for (let t = from + 10; t <= from + seconds; t += 10) {
    const c = temp(t);
    out.push(rc.push(t * 1000, 10, delta(rates(t, c).map((r) => Math.round(r * 10))), c, 4));
  }
  return out;
}

describe('the qualification rules over rolling windows, one receiver in service', () => {
  it('the protocol without a watch section watches at its qualification limits and the section defaults', () => {
    expect(settings).toMatchObject({ intervalS: 10, clearAfterS: 900, statusEveryS: 3600, countWindowS: 3600 });
    expect(settings.laneRatio).toMatchObject({ fail: 1000, marginal: 100, marginalFloorBer: 1e-9, failFloorBer: 1e-6, windowS: 60, holdS: 10 });
    expect(settings.fecWindow).toMatchObject({ fail: 1, marginal: 2, windowS: 60, holdS: 10 });
    expect(settings.countFail).toEqual({ 'crc-errors': 1, 'post-fec-errors': 1, 'link-down-events': 1 });
  });

  it('four alike lanes with faint noise: no condition over a day of temperature swings', () => {
    const rc = new ReceiverConditions('b cage 1', settings);
    const temp = (t: number) => 61 + 20 * Math.max(0, Math.sin((t / 86400) * 2 * Math.PI));
    const all = feed(rc, 86400, (_t, c) => [0.1, 0.12, 0.09, 0.11].map((r) => r * 10 ** ((c - 50) / 35)), temp).flat();
    expect(all).toEqual([]);
    // ~0.2 errors/s per lane at 61 °C: ~12 in a 60-s window of 3.2e12 bits, BER ~4e-12, 7.8 decades below 2.4e-4
    expect(rc.marginDecades).toBeGreaterThan(7.5);
  });

  it('one lane 300x the others: MARGINAL (steady); the same lane growing with heat to 1000x+: FAIL, naming the lane', () => {
    const rc = new ReceiverConditions('b cage 1', settings);
    // Lane 2 grows 0.17 decades per degree, the others 0.11 (failing-clone's curves, between 60 and 81 °C).
    const rates = (_t: number, c: number) => [40, 36, 2900, 44].map((r, i) => r * 10 ** ((c - 60) * (i === 2 ? 0.174 : 0.109)));
    const warm = feed(rc, 3600, rates, () => 70).flat();
    const steady = warm.filter((c) => c.rule === 'lane-ratio');
    expect(steady.length).toBeGreaterThan(0);
    expect(steady.every((c) => c.grade === 'MARGINAL' && c.lane === 2)).toBe(true);
    expect(steady[0]!.value).toBeGreaterThan(100);
    expect(steady[0]!.value).toBeLessThan(1000);
    // Then heat from 60 to 80 °C over an hour: the ratio passes 1000x and the lane certainly grows with temperature.
    const hot = feed(rc, 3600, rates, (t) => 60 + ((t - 3600) / 3600) * 20, 3600).flat();
    const fail = hot.find((c) => c.rule === 'lane-ratio' && c.grade === 'FAIL');
    expect(fail).toMatchObject({ lane: 2, unit: 'x', limit: 1000 });
    expect(fail!.message).toMatch(/^b cage 1 lane 2: .*growing with temperature.*it grew/);
    const fec = hot.filter((c) => c.rule === 'fec-window' && c.grade === 'FAIL');
    expect(fec.every((c) => c.lane === 2)).toBe(true);
    expect(fec[0]!.value).toBeLessThan(1);
  });

  it('a CRC error is a FAIL condition for countWindowS, then gone; its alarm is raised once and cleared after clearAfterS', () => {
    const rc = new ReceiverConditions('b cage 1', settings);
    const book = new AlarmBook(settings.clearAfterS);
    const events = [];
    for (let t = 10; t <= 3600 + 1200; t += 10) {
      const cs = rc.push(t * 1000, 10, delta([0, 0, 0, 0], t === 100 ? { crcErrors: 2 } : {}), 60, 4);
      if (t === 100) expect(cs).toMatchObject([{ rule: 'crc-errors', grade: 'FAIL', value: 2, limit: 1, lane: null }]);
      events.push(...book.update(place(t), cs));
    }
    expect(events.map((e) => [e.type, e.rule, e.atS])).toEqual([
      ['alarm', 'crc-errors', 100],
      // counted in the window until 3600 s after it (the last tick whose window holds it: 3690), then 900 s gone
      ['clear', 'crc-errors', 3690 + 900],
    ]);
  });

  it('a condition getting worse raises a second alarm (MARGINAL, then FAIL), never a third for the same grade', () => {
    const book = new AlarmBook(900);
    const c = (grade: 'MARGINAL' | 'FAIL'): Condition => ({ rule: 'fec-window', grade, lane: 2, value: 1.5, unit: 'decades', limit: 2, message: 'm' });
    const got = [
      book.update(place(10), [c('MARGINAL')]),
      book.update(place(20), [c('MARGINAL')]),
      book.update(place(30), [c('FAIL')]),
      book.update(place(40), [c('MARGINAL')]),
    ];
    expect(got.map((x) => x.map((e) => `${e.type} ${e.grade}`))).toEqual([['alarm MARGINAL'], [], ['alarm FAIL'], []]);
    expect(book.count('b', 1)).toBe(1);
    expect(book.count('a', 1)).toBe(0);
  });
});
