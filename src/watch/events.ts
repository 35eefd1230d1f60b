// What `cablequal watch` says, one event a line: on stdout (JSON lines with --json, else a short line), in the journal
// under --out, and in the results store. `atS` is seconds since the watch first started (a resumed watch goes on
// counting), `at` the same moment as an ISO time.
import { printable } from '../domain/text.js';
import type { LinkSnapshot } from '../probes/link-snapshot.js';
import type { WatchedRule } from './conditions.js';

// Where an event happened: the cable (its CableLink id and serial) and the receiver (node, cage) that saw it.
export interface EventPlace {
  cable: string;
  serial: string | null;
  node: string;
  cage: number;
  atS: number;
  at: string;
}

export interface AlarmEvent extends EventPlace {
  type: 'alarm';
  rule: WatchedRule;
  grade: 'MARGINAL' | 'FAIL';
  lane: number | null;
  value: number;
  unit: string;
  limit: number;
  message: string;
}

export interface ClearEvent extends EventPlace {
  type: 'clear';
  rule: WatchedRule;
  grade: 'MARGINAL' | 'FAIL';
  lane: number | null;
  raisedS: number;
  message: string;
}

// What each end showed while the link was down (src/probes/link-snapshot.ts, the run's snapshot): `ethtool <if>`
// (the PHY's reason is readable only then), `ethtool -S` and `ethtool -m`, raw, with the link's state and reason.
export type EndSnapshot = LinkSnapshot & { cage: number };

export interface LinkDownEvent extends EventPlace {
  type: 'link-down';
  // 'node': a node of the cable was away (rebooting, unreachable) when it dropped: not counted against the cable
  cause: 'cable' | 'node';
  resets: number; // link drops of this cable since the watch first started, this one included
  snapshot: { ends: EndSnapshot[] };
  message: string;
}

export interface LinkUpEvent extends EventPlace {
  type: 'link-up';
  downS: number;
  resets: number;
  message: string;
}

// A receiver's counters went backwards (a reboot, a driver reset, mlxlink --pc): counted from zero, never negative.
export interface ResetEvent extends EventPlace {
  type: 'counter-reset';
  rebooted: boolean;
  message: string;
}

export interface NodeEvent {
  type: 'node-lost' | 'node-back';
  node: string;
  atS: number;
  at: string;
  message: string;
}

// Each cable at the start and every statusEveryS: its state and figures now.
export interface StatusEvent extends EventPlace {
  type: 'status';
  link: 'up' | 'down' | 'unknown';
  alarms: number;
  resets: number;
  laneBer: number[]; // each lane's BER over the last FEC window (empty before one is full)
  marginDecades: number | null;
  nicTempC: number | null;
  moduleTempC: number | null;
  message: string;
}

export interface StartEvent {
  type: 'start';
  atS: number;
  at: string;
  resumed: boolean;
  intervalS: number;
  cables: { cable: string; serial: string | null; ends: { node: string; cage: number; netdev: string }[] }[];
  message: string;
}

export interface EndEvent {
  type: 'end';
  atS: number;
  at: string;
  reason: string;
  message: string;
}

export type WatchEvent = AlarmEvent | ClearEvent | LinkDownEvent | LinkUpEvent | ResetEvent | NodeEvent | StatusEvent | StartEvent | EndEvent;

// The short line of an event, cut to `columns` on a terminal (null: whole, for a log):
// "12:00:10 ALARM MARGINAL lane-ratio ONT2403150288 spark-b cage 1 lane 2: 101x the median ...".
export function eventLine(e: WatchEvent, columns: number | null = 100): string {
  const time = e.at.slice(11, 19);
  const kind = e.type === 'alarm' || e.type === 'clear' ? `${e.type.toUpperCase()} ${e.grade} ${e.rule}` : e.type.toUpperCase();
  const cable = e.type === 'alarm' || e.type === 'clear' || e.type === 'counter-reset' ? ` ${e.serial ?? e.cable}` : '';
  const text = printable(`${time} ${kind}${cable} ${e.message}`);
  return columns !== null && text.length > columns ? `${text.slice(0, Math.max(1, columns - 1))}…` : text;
}
