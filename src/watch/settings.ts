// What `cablequal watch` holds each cable in service to: the protocol's `watch` section (docs/protocol.md "The watch
// section") over its qualification limits. A watched rule the section does not list keeps its qualification limit,
// windows, floors and growth included, so the thresholds are the lab's, read through the same src/rules/watch-config.ts
// a run's early stop is built by.
import type { Limit } from '../domain/limit.js';
import type { FecWindowSettings, LaneRatioSettings } from '../analysis/early-stop.js';
import type { CountRule } from '../analysis/watch.js';
import type { FunctionsRule, ResetRule } from '../analysis/counters.js';
import { RULES_VERSIONS } from '../rules/versions.js';
import { watchConfigOf } from '../rules/watch-config.js';
import type { Protocol, ServiceWatchConfig } from '../protocol/index.js';
import { DEFAULT_SERVICE_WATCH } from '../protocol/validate.js';

export interface ServiceSettings {
  intervalS: number;
  clearAfterS: number;
  statusEveryS: number;
  countWindowS: number;
  countFail: Record<CountRule, number>; // an alarm when the rolling count reaches this
  fecWindow: FecWindowSettings;
  laneRatio: LaneRatioSettings;
  // How counters are read, as today's rules version reads them (resets counted from zero, both PCIe functions).
  resets: ResetRule;
  functions: FunctionsRule;
}

// A qualification limit with the watch section's override of it.
function overridden(limit: Limit, w: ServiceWatchConfig): Limit {
  const o = w.limits.find((l) => l.rule === limit.rule);
  if (!o) return limit;
  return {
    ...limit,
    ...(o.fail !== undefined ? { fail: o.fail } : {}),
    ...(o.marginal !== undefined ? { marginal: o.marginal } : {}),
    params: { ...(limit.params ?? {}), ...(o.params ?? {}) },
  };
}

// The settings of a protocol's watch (its defaults when it has no `watch` section).
export function serviceSettingsOf(protocol: Pick<Protocol, 'limits' | 'watch'>): ServiceSettings {
  const w = protocol.watch ?? DEFAULT_SERVICE_WATCH;
  const version = RULES_VERSIONS.at(-1)!;
  const config = watchConfigOf(
    version,
    protocol.limits.map((l) => overridden(l, w)),
  );
  if ('kind' in config || !config.fecWindow || !config.laneRatio) throw new RangeError(`rules version ${version.version} has no windowed watch`);
  return {
    intervalS: w.intervalS,
    clearAfterS: w.clearAfterS,
    statusEveryS: w.statusEveryS,
    countWindowS: w.countWindowS,
    countFail: config.countFail,
    fecWindow: config.fecWindow,
    laneRatio: config.laneRatio,
    resets: config.resets ?? 'from-zero',
    functions: config.functions ?? 'larger',
  };
}
