// Conditions become alarms: one `alarm` event when a condition first holds (and again when it gets worse, MARGINAL to
// FAIL), one `clear` when it has been gone for clearAfterS. What is raised is kept (and journaled), so a watcher that
// restarts raises nothing twice.
import type { Condition, WatchedRule } from './conditions.js';
import type { AlarmEvent, ClearEvent, EventPlace } from './events.js';

// An alarm raised and not cleared.
export interface ActiveAlarm {
  rule: WatchedRule;
  grade: 'MARGINAL' | 'FAIL';
  node: string;
  cage: number;
  lane: number | null;
  cable: string;
  serial: string | null;
  raisedS: number;
  lastSeenS: number;
}

const keyOf = (node: string, cage: number, rule: string, lane: number | null) => `${node}|${cage}|${rule}|${lane ?? '-'}`;

export class AlarmBook {
  private readonly active = new Map<string, ActiveAlarm>();

  constructor(private readonly clearAfterS: number) {}

  // Alarms kept from a journal (a restarted watcher).
  restore(a: ActiveAlarm): void {
    this.active.set(keyOf(a.node, a.cage, a.rule, a.lane), a);
  }

  list(): ActiveAlarm[] {
    return [...this.active.values()];
  }

  // Whether the receiver has an alarm (for status lines and metrics).
  count(node: string, cage: number): number {
    return this.list().filter((a) => a.node === node && a.cage === cage).length;
  }

  // One receiver's conditions now: the alarms they raise, and the clears of those gone long enough.
  update(place: EventPlace, conditions: readonly Condition[]): (AlarmEvent | ClearEvent)[] {
    const out: (AlarmEvent | ClearEvent)[] = [];
    const seen = new Set<string>();
    for (const c of conditions) {
      const key = keyOf(place.node, place.cage, c.rule, c.lane);
      seen.add(key);
      const a = this.active.get(key);
      if (a) {
        a.lastSeenS = place.atS;
        if (!(a.grade === 'MARGINAL' && c.grade === 'FAIL')) continue;
        a.grade = 'FAIL';
      } else {
        this.active.set(key, {
          rule: c.rule,
          grade: c.grade,
          node: place.node,
          cage: place.cage,
          lane: c.lane,
          cable: place.cable,
          serial: place.serial,
          raisedS: place.atS,
          lastSeenS: place.atS,
        });
      }
      out.push({ type: 'alarm', ...place, rule: c.rule, grade: c.grade, lane: c.lane, value: c.value, unit: c.unit, limit: c.limit, message: c.message });
    }
    for (const [key, a] of this.active) {
      if (a.node !== place.node || a.cage !== place.cage || seen.has(key)) continue;
      if (place.atS - a.lastSeenS < this.clearAfterS) continue;
      this.active.delete(key);
      const where = `${a.node} cage ${a.cage}${a.lane !== null ? ` lane ${a.lane}` : ''}`;
      out.push({
        type: 'clear',
        ...place,
        rule: a.rule,
        grade: a.grade,
        lane: a.lane,
        raisedS: a.raisedS,
        message: `${where}: ${a.rule} ${a.grade} gone for ${Math.round(place.atS - a.lastSeenS)} s (raised ${Math.round(place.atS - a.raisedS)} s ago)`,
      });
    }
    return out;
  }
}
