// `cablequal watch`: every cable of a cluster in service, read-only, sampled every intervalS by the same persistent
// sampler, tick scripts and parsers as a run (src/sampling), its counters taken by the same intervals
// (src/analysis/intervals.ts), held to the qualification's rules over rolling windows (conditions.ts), its events
// (alarm, clear, link-down with both ends' snapshot, link-up, counter-reset, node-lost/back, status) handed to the sinks
// as they happen. A node that stops answering is an event, never the end of the watch.
import type { CableLink } from '../domain/cabling.js';
import type { Clock } from '../domain/clock.js';
import { laneCounterName, PHY_COUNTERS, type NodeSample, type PhyCounters } from '../domain/sample.js';
import { Sampler, type NodeTick } from '../sampling/sampler.js';
import { runOnSchedule } from '../sampling/schedule.js';
import type { SampleSetConfig } from '../sampling/sample-set.js';
import { AlarmBook, type ActiveAlarm } from './alarms.js';
import { CableState, type ReceiverTick } from './cable-state.js';
import type { WatchedNode } from './cables.js';
import type { EventPlace, LinkDownEvent, StatusEvent, WatchEvent } from './events.js';
import type { ServiceSettings } from './settings.js';
import { takeLinkSnapshot } from '../probes/link-snapshot.js';
import { parseEthtoolModule } from '../probes/ethtool-module.js';
import { ParseError } from '../domain/errors.js';
import type { ReceiverFigures } from '../domain/service.js';
import { cmd } from '../transport/commands.js';
import { TransportError } from '../transport/types.js';

// One tick's figures of one receiver: declared in src/domain/service.ts, where the metrics read them too.
export type { ReceiverFigures } from '../domain/service.js';

// Where the watch's output goes: each event, each tick's figures. A sink must not throw (the journal's full disk is
// the caller's to handle) and is never waited on longer than its own write.
export interface WatchSinks {
  event(e: WatchEvent): void;
  tick?(atS: number, at: string, figures: ReceiverFigures[]): void;
}

// What a restarted watch carries over from its journal: when the watch first started, its alarms and each cable's
// drops (counters are taken again from the nodes: nothing is counted twice).
export interface WatchResume {
  originMs: number;
  lastMs: number; // the journal's last line
  alarms: ActiveAlarm[];
  resets: Record<string, number>; // "<cable id>|<serial>" -> drops
  down: Record<string, number | null>; // "<cable id>|<serial>" -> atS it went down (still down when the watcher stopped)
}

export interface WatchOptions {
  nodes: WatchedNode[];
  links: CableLink[];
  clock: Clock;
  settings: ServiceSettings;
  sinks: WatchSinks;
  forS?: number; // stop after this long (else at the signal)
  signal?: AbortSignal;
  resume?: WatchResume;
}

// The *_phy counters a watch derives its figures from, by their ethtool names, as read.
function countersOf(phy: PhyCounters): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { [laneCounterName(0).replace('_0_', '_N_')]: phy.laneErrors.map(String) };
  for (const [field, name] of PHY_COUNTERS) {
    const v = phy[field];
    if (v !== undefined && typeof v === 'bigint') out[name] = String(v);
  }
  return out;
}

// The sample set of a node: both rails of every cabled cage, each reading every tick (at 10 s nothing is read more
// often than a run reads it), no GPU telemetry (a watch judges cables, and nvidia-smi costs a node CPU).
export function watchSampleSet(rails: string[]): SampleSetConfig {
  return { rails, fecNetdev: rails[0]!, linkEveryTicks: 1, fecEveryTicks: 1, hwmonEveryTicks: 1, gpu: false };
}

// Watch until forS has passed or the signal fires; the number of ticks taken.
export async function watchCables(o: WatchOptions): Promise<{ ticks: number; missedDeadlines: number; originMs: number }> {
  const { clock, settings, sinks } = o;
  const originMs = o.resume?.originMs ?? clock.now();
  const startMs = clock.now();
  const atS = () => Math.round(clock.now() - originMs) / 1000;
  const at = () => new Date(clock.now()).toISOString();
  const cables = o.links.map((l) => new CableState(l, settings));
  const book = new AlarmBook(settings.clearAfterS);
  // Only what the journal says of these cables (the same serial in the same cages) carries over.
  const key = (l: CableLink) => `${l.id}|${l.serial ?? ''}`;
  for (const a of o.resume?.alarms ?? []) if (o.links.some((l) => key(l) === `${a.cable}|${a.serial ?? ''}`)) book.restore(a);
  for (const c of cables) {
    c.resets = o.resume?.resets[key(c.link)] ?? 0;
    c.downSinceS = o.resume?.down[key(c.link)] ?? null;
  }
  const railsOf = new Map<string, string[]>();
  for (const l of o.links) for (const e of [l.a, l.b]) railsOf.set(e.node, [...(railsOf.get(e.node) ?? []), ...e.rails.map((r) => r.netdev)]);
  const watched = o.nodes.filter((n) => railsOf.has(n.name));
  const runnerOf = new Map(o.nodes.map((n) => [n.name, n.runner]));
  sinks.event({
    type: 'start',
    atS: atS(),
    at: at(),
    resumed: o.resume !== undefined,
    intervalS: settings.intervalS,
    cables: o.links.map((l) => ({ cable: l.id, serial: l.serial, ends: [l.a, l.b].map((e) => ({ node: e.node, cage: e.cage, netdev: e.rails[0]!.netdev })) })),
    message: `${o.resume ? 'resumed' : 'watching'} ${o.links.length} cable(s) on ${watched.map((n) => n.name).join(', ')} every ${settings.intervalS} s`,
  });
  if (watched.length === 0) return { ticks: 0, missedDeadlines: 0, originMs };
  const sampler = new Sampler({
    clock,
    nodes: watched.map((n) => ({ name: n.name, runner: n.runner, sampleSet: watchSampleSet(railsOf.get(n.name)!) })),
    calibrationRounds: 1,
  });
  await sampler.open();
  const lost = new Map<string, number>(); // node -> atS it stopped answering
  const lastLostS = new Map<string, number>(); // node -> the last atS it did not answer
  let nextStatusS = atS();

  const place = (c: CableState, node: string, cage: number): EventPlace => ({ cable: c.link.id, serial: c.link.serial, node, cage, atS: atS(), at: at() });

  const nodeEvents = (ticks: NodeTick[]) => {
    for (const t of ticks) {
      const since = lost.get(t.node);
      if (!t.sample) lastLostS.set(t.node, atS());
      if (!t.sample && since === undefined) {
        lost.set(t.node, atS());
        sinks.event({
          type: 'node-lost',
          node: t.node,
          atS: atS(),
          at: at(),
          message: `${t.node} does not answer (${t.error ?? 'no sample'}); still trying every ${settings.intervalS} s`,
        });
      } else if (t.sample && since !== undefined) {
        lost.delete(t.node);
        sinks.event({ type: 'node-back', node: t.node, atS: atS(), at: at(), message: `${t.node} answers again after ${Math.round(atS() - since)} s` });
      }
    }
  };

  // A node away within the last few intervals: a link drop then is the node's (a reboot), not the cable's.
  const nodeAway = (c: CableState) =>
    c.receivers.some((r) => lost.has(r.end.node) || atS() - (lastLostS.get(r.end.node) ?? -Infinity) <= 3 * settings.intervalS);

  const linkEvents = async (c: CableState, rt: ReceiverTick[]) => {
    const seenDown = rt.some((x) => x.answered && x.receiver.linkUp === false);
    const dropped = rt.some((x) => (x.interval?.d.linkDownEvents ?? 0) > 0);
    const allUp = rt.every((x) => x.receiver.linkUp !== false) && rt.some((x) => x.answered && x.receiver.linkUp === true);
    if (c.downSinceS === null && (seenDown || dropped)) {
      c.resets++;
      c.downSinceS = atS();
      const first = rt.find((x) => x.receiver.linkUp === false) ?? rt.find((x) => (x.interval?.d.linkDownEvents ?? 0) > 0)!;
      // Both ends at once: the reason is readable only while the link is down.
      const ends = await Promise.all(
        c.receivers.map(async (r) => ({ ...(await takeLinkSnapshot(runnerOf.get(r.end.node)!, r.netdevs[0]!, clock, { originMs })), cage: r.end.cage })),
      );
      const why = ends.map((e) => e.link.reason).find((x) => x !== null);
      const away = nodeAway(c);
      const cause = away ? '; a node of the cable was away (a reboot?)' : '';
      const ev: LinkDownEvent = {
        type: 'link-down',
        ...place(c, first.receiver.end.node, first.receiver.end.cage),
        cause: away ? 'node' : 'cable',
        resets: c.resets,
        snapshot: { ends },
        message: `cable ${c.link.serial ?? c.link.id} (${c.link.id}): link down${seenDown ? '' : ' and back between two samples'}${why ? ` (${why})` : ''}, drop ${c.resets} since the watch started${cause}`,
      };
      sinks.event(ev);
      if (!seenDown && allUp) upEvent(c);
    } else if (c.downSinceS !== null && allUp && !seenDown) upEvent(c);
  };

  const upEvent = (c: CableState) => {
    const downS = Math.max(0, atS() - c.downSinceS!);
    c.downSinceS = null;
    const r = c.receivers[0];
    sinks.event({
      type: 'link-up',
      ...place(c, r.end.node, r.end.cage),
      downS,
      resets: c.resets,
      message: `cable ${c.link.serial ?? c.link.id}: link up again after ${downS} s down (${c.resets} drop(s) since the watch started)`,
    });
  };

  // The module's own temperature, read with each status (`ethtool -m`, through sudo -n as identity reads it): active
  // cables and optics have one; a passive DAC (every Spark cable of DOMAIN.md) reports none, and that is null.
  const moduleTemp = async (node: string, netdev: string): Promise<number | null> => {
    try {
      const r = await runnerOf.get(node)!.run(cmd.ethtoolModule(netdev), { timeoutMs: 10_000 });
      if (r.exitCode !== 0) return null;
      const m = parseEthtoolModule(r.stdout);
      return 'diagnostics' in m ? (m.diagnostics?.temperatureC ?? null) : null;
    } catch (e) {
      if (e instanceof ParseError || e instanceof TransportError) return null;
      throw e;
    }
  };

  const status = async (c: CableState): Promise<StatusEvent> => {
    // The receiver with the smaller margin speaks for the cable.
    const [r] = [...c.receivers].sort((x, y) => (x.conditions.marginDecades ?? Infinity) - (y.conditions.marginDecades ?? Infinity));
    const link = c.downSinceS !== null ? 'down' : c.receivers.every((x) => x.linkUp === true) ? 'up' : 'unknown';
    const alarms = c.receivers.reduce((n, x) => n + book.count(x.end.node, x.end.cage), 0);
    const margin = r!.conditions.marginDecades;
    const temps = c.receivers.map((x) => (x.nicTempC === null ? '?' : `${Math.round(x.nicTempC)} °C`)).join('/');
    const moduleTempC = lost.has(r!.end.node) ? null : await moduleTemp(r!.end.node, r!.netdevs[0]!);
    return {
      type: 'status',
      ...place(c, r!.end.node, r!.end.cage),
      link,
      alarms,
      resets: c.resets,
      laneBer: r!.conditions.laneBer,
      marginDecades: margin !== null && Number.isFinite(margin) ? margin : null,
      nicTempC: r!.nicTempC,
      moduleTempC,
      message: `cable ${c.link.serial ?? c.link.id} (${c.link.id}): link ${link}, ${alarms} alarm(s), ${c.resets} drop(s), FEC margin ${margin === null ? 'not yet measured' : Number.isFinite(margin) ? `${margin.toFixed(1)} decades` : 'no errors'}, NIC ${temps}${moduleTempC !== null ? `, module ${moduleTempC} °C` : ''}`,
    };
  };

  const tick = async () => {
    const { nodes: ticks } = await sampler.tick();
    nodeEvents(ticks);
    const samples = new Map<string, NodeSample>();
    for (const t of ticks) if (t.sample && Number.isFinite(t.sample.tMs)) samples.set(t.node, t.sample);
    const figures: ReceiverFigures[] = [];
    for (const c of cables) {
      const rt = c.push(samples, nodeAway(c));
      for (const x of rt) {
        const end = x.receiver.end;
        if (x.reset)
          sinks.event({
            type: 'counter-reset',
            ...place(c, end.node, end.cage),
            rebooted: nodeAway(c),
            message: `${end.node} cage ${end.cage}: counters went backwards (${nodeAway(c) ? 'the node was away: a reboot' : 'cleared or a driver reset'}); counted from zero, nothing counted twice`,
          });
        if (x.answered) for (const e of book.update(place(c, end.node, end.cage), x.conditions)) sinks.event(e);
        const iv = x.interval;
        if (iv)
          figures.push({
            cable: c.link.id,
            serial: c.link.serial,
            node: end.node,
            cage: end.cage,
            dtS: iv.dtS,
            laneErrors: iv.d.laneErrors,
            correctedBits: iv.d.correctedBits,
            crcErrors: iv.d.crcErrors,
            postFecErrors: iv.d.postFecErrors,
            linkDownEvents: iv.d.linkDownEvents,
            linkUp: x.receiver.linkUp ?? null,
            nicTempC: x.receiver.nicTempC,
            marginDecades: x.receiver.conditions.marginDecades,
            alarms: book.count(end.node, end.cage),
            counters: countersOf(iv.rail.phy),
          });
      }
      await linkEvents(c, rt);
    }
    sinks.tick?.(atS(), at(), figures);
    if (atS() >= nextStatusS) {
      for (const c of cables) sinks.event(await status(c));
      nextStatusS = atS() + settings.statusEveryS;
    }
  };

  try {
    const endMs = o.forS !== undefined ? startMs + o.forS * 1000 : Infinity;
    const summary = await runOnSchedule(
      { clock, intervalMs: settings.intervalS * 1000, ...(o.signal ? { signal: o.signal } : {}), stop: () => clock.now() >= endMs },
      tick,
    );
    for (const c of cables) sinks.event(await status(c));
    return { ...summary, originMs };
  } finally {
    await sampler.close();
  }
}
