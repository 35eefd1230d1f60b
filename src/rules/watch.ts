// The run's watch (src/analysis/early-stop.ts) configured from a protocol's limits: which counts FAIL at once, and the
// windows, floors and hold times of fec-window and lane-ratio. The live run and every re-grade build it here.
import type { Limit } from '../domain/limit.js';
import type { WatchSettings } from '../analysis/early-stop.js';
import { RULES, defaultLimit } from './registry.js';

// A protocol's limit for a rule, or the rule's declared default (a limit list of rules version 1 lacks fec-window).
function limitOrDefault(limits: readonly Limit[], rule: string): Limit & { params: Readonly<Record<string, number>> } {
  const decl = RULES.find((r) => r.id === rule)!;
  const d = defaultLimit(decl);
  const l = limits.find((x) => x.rule === rule);
  return l ? { ...l, params: { ...d.params, ...l.params } } : d;
}

// Watch settings from the limits (graded phases and lanes come from the run).
export function watchSettingsOf(limits: readonly Limit[]): Omit<WatchSettings, 'gradedPhases' | 'lanes'> {
  const fw = limitOrDefault(limits, 'fec-window');
  const lr = limitOrDefault(limits, 'lane-ratio');
  const p = lr.params;
  return {
    countFail: {
      'link-down-events': limitOrDefault(limits, 'link-down-events').fail,
      'crc-errors': limitOrDefault(limits, 'crc-errors').fail,
      'post-fec-errors': limitOrDefault(limits, 'post-fec-errors').fail,
    },
    fecWindow: { fail: fw.fail, ...(fw.marginal !== undefined ? { marginal: fw.marginal } : {}), windowS: fw.params['windowS']!, holdS: fw.params['holdS']! },
    laneRatio: {
      fail: lr.fail,
      ...(lr.marginal !== undefined ? { marginal: lr.marginal } : {}),
      marginalFloorBer: p['marginalFloorBer']!,
      failFloorBer: p['failFloorBer']!,
      growingDecades: p['growingDecades']!,
      runawayDecades: p['runawayDecades']!,
      minSpanC: p['minSpanC']!,
      windowS: p['windowS']!,
      holdS: p['holdS']!,
    },
  };
}
