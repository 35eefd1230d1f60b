// The run's watch (src/analysis/early-stop.ts, or version 1's src/analysis/tick-watch.ts) configured from a protocol's
// limits for a rules version: which counts FAIL at once, and the windows, floors and hold times of fec-window and
// lane-ratio. The live run and every re-grade build it here, from the limits `limitsFor` filled in.
import type { Limit } from '../domain/limit.js';
import type { WatchConfig } from '../analysis/analyze.js';
import type { RulesVersion } from './versions.js';

// A limit of the list (every rule of the version is in it: `limitsFor` fills the defaults).
function limitIn(limits: readonly Limit[], rule: string): Limit & { params: Readonly<Record<string, number>> } {
  const l = limits.find((x) => x.rule === rule);
  if (!l) throw new RangeError(`the watch needs a limit for ${rule}`);
  return { ...l, params: l.params ?? {} };
}

// The watch of a rules version over its limits (the protocol's earlyStop for version 1's tick count).
export function watchConfigOf(
  version: Pick<RulesVersion, 'watch'> & { analysis?: Pick<RulesVersion['analysis'], 'counterResets' | 'functions'> },
  limits: readonly Limit[],
  earlyStop?: { laneRatioConsecutiveTicks?: number },
): WatchConfig {
  const countFail = {
    'link-down-events': limitIn(limits, 'link-down-events').fail,
    'crc-errors': limitIn(limits, 'crc-errors').fail,
    'post-fec-errors': limitIn(limits, 'post-fec-errors').fail,
  };
  const lr = limitIn(limits, 'lane-ratio');
  if (version.watch === 'tick-streak') {
    return { kind: 'tick-streak', countFail, laneRatioFail: lr.fail, ticks: earlyStop?.laneRatioConsecutiveTicks ?? 5 };
  }
  const fw = limitIn(limits, 'fec-window');
  const p = lr.params;
  // The watch reads an interval whose counters went down, and the functions of a cage, as the version's analysis does.
  const resets = version.analysis?.counterResets;
  const functions = version.analysis?.functions;
  return {
    countFail,
    ...(resets ? { resets } : {}),
    ...(functions ? { functions } : {}),
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
