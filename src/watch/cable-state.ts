// One watched cable: its two receivers (each end's node and cage), their intervals taken as a run takes them
// (src/analysis/intervals.ts: counters that went backwards counted from zero, both PCIe functions read), their
// conditions (conditions.ts), and the link's state: down since when, and how many times it dropped.
import type { CableLink, LinkEnd } from '../domain/cabling.js';
import type { NodeSample } from '../domain/sample.js';
import { ReceiverIntervals, type TakenInterval } from '../analysis/intervals.js';
import { ReceiverConditions, type Condition } from './conditions.js';
import type { ServiceSettings } from './settings.js';

// One end as a receiver: what its last interval said.
export interface Receiver {
  end: LinkEnd;
  key: string; // "<node>:<cage>": its stream of intervals
  netdevs: string[];
  conditions: ReceiverConditions;
  nicTempC: number | null;
  linkUp: boolean | undefined;
  lastInterval: TakenInterval | null;
}

// What one tick gave for one receiver.
export interface ReceiverTick {
  receiver: Receiver;
  answered: boolean; // its node answered this tick
  interval: TakenInterval | null;
  reset: boolean; // a counter went backwards (a reboot, a driver reset, mlxlink --pc)
  conditions: Condition[];
}

export class CableState {
  readonly receivers: [Receiver, Receiver];
  resets = 0;
  downSinceS: number | null = null;
  private readonly intervals: ReceiverIntervals;

  constructor(
    readonly link: CableLink,
    settings: ServiceSettings,
  ) {
    this.intervals = new ReceiverIntervals({ resets: settings.resets, functions: settings.functions, lanes: { carried: null } });
    const receiver = (end: LinkEnd): Receiver => {
      const key = `${end.node}:${end.cage}`;
      const netdevs = end.rails.map((r) => r.netdev);
      this.intervals.node(key, netdevs[0]);
      return {
        end,
        key,
        netdevs,
        conditions: new ReceiverConditions(`${end.node} cage ${end.cage}`, settings),
        nicTempC: null,
        linkUp: undefined,
        lastInterval: null,
      };
    };
    this.receivers = [receiver(link.a), receiver(link.b)];
  }

  // The receivers' part of this tick's samples (by node name; a node that did not answer has none). `nodeAway`: a node
  // of the cable was away (rebooting): a link drop now is the node's, reported but not counted against the cable.
  push(samples: ReadonlyMap<string, NodeSample>, nodeAway = false): ReceiverTick[] {
    return this.receivers.map((r) => {
      const s = samples.get(r.end.node);
      if (!s) return { receiver: r, answered: false, interval: null, reset: false, conditions: [] };
      if (s.nicTempC !== null) r.nicTempC = s.nicTempC;
      const mine: NodeSample = { ...s, node: r.key, rails: s.rails.filter((x) => r.netdevs.includes(x.netdev)) };
      const { rail, interval, reset } = this.intervals.push(mine);
      if (rail?.linkUp !== undefined) r.linkUp = rail.linkUp;
      r.lastInterval = interval;
      const d = interval && nodeAway ? { ...interval.d, linkDownEvents: 0 } : interval?.d;
      const conditions = interval && d ? r.conditions.push(s.tMs, interval.dtS, d, r.nicTempC, interval.lanesUsed ?? interval.rail.lanes ?? null) : [];
      if (reset && !interval) r.conditions.restart();
      return { receiver: r, answered: true, interval, reset, conditions };
    });
  }
}
