// A cable's service since its qualification (`cablequal watch`, store migration 6): the cable page's service section
// (each receiver lane's pre-FEC BER and the NIC temperature over the days watched, the alarms, each link drop with
// what both ends showed while it was down) and the fleet page (every watched cable with its state).
import { SERIAL_RATE_BPS } from '../analysis/counters.js';
import type { FleetRow, ServiceEventRow, ServiceSampleRow } from '../store/service.js';
import { chartSpec, OUTCOME_COLOURS } from './chart-spec.js';
import { esc, href, layout } from './html.js';

const LANE_COLOURS = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f'];

const detailOf = (e: ServiceEventRow): Record<string, unknown> => {
  try {
    return e.detail ? (JSON.parse(e.detail) as Record<string, unknown>) : {};
  } catch {
    return {};
  }
};

// One link drop's snapshot: per end, its state and reason, and the three outputs as read (escaped, folded).
function snapshotHtml(e: ServiceEventRow): string {
  const ends = ((detailOf(e)['snapshot'] as { ends?: unknown[] } | undefined)?.ends ?? []) as {
    node?: string;
    cage?: number;
    netdev?: string;
    at?: string;
    link?: { detected?: boolean | null; reason?: string | null; raw?: string; error?: string };
    stats?: { raw?: string; error?: string };
    module?: { raw?: string; error?: string };
  }[];
  if (ends.length === 0) return '<span class="muted">no snapshot</span>';
  return ends
    .map((x) => {
      const state =
        x.link?.detected === false ? 'Link detected: no' : x.link?.detected === true ? 'Link detected: yes (back before the read)' : 'link state unread';
      const pre = (label: string, r?: { raw?: string; error?: string }) =>
        `<details><summary>${esc(label)}</summary><pre class="code">${esc(r?.error ? `not read: ${r.error}` : (r?.raw ?? ''))}</pre></details>`;
      return `<div><b>${esc(String(x.node ?? '?'))}</b> cage ${esc(String(x.cage ?? '?'))} ${esc(String(x.netdev ?? ''))}: ${esc(state)}${x.link?.reason ? ` (${esc(x.link.reason)})` : ''}, read ${esc(String(x.at ?? ''))}${pre(`ethtool ${x.netdev ?? ''}`, x.link)}${pre(`ethtool -S ${x.netdev ?? ''}`, x.stats)}${pre(`ethtool -m ${x.netdev ?? ''}`, x.module)}</div>`;
    })
    .join('');
}

// The service section of a cable page (empty when the cable was never watched).
export function serviceSection(o: { events: ServiceEventRow[]; samples: ServiceSampleRow[] }): string {
  if (o.events.length === 0 && o.samples.length === 0)
    return '<h2>In service</h2><p class="muted">This cable has not been watched in service (cablequal watch).</p>';
  const t0 = o.samples.length ? Date.parse(o.samples[0]!.at) : Date.parse(o.events.at(-1)!.at);
  const hours = (at: string) => Math.round(((Date.parse(at) - t0) / 3600e3) * 1000) / 1000;
  const receivers = [...new Set(o.samples.map((s) => `${s.node}|${s.cage}`))].sort();
  const times = [...new Set(o.samples.map((s) => s.at))].sort();
  const x = times.map(hours);
  const at = new Map(o.samples.map((s) => [`${s.node}|${s.cage}|${s.at}`, s]));
  const lanesOf = (s: ServiceSampleRow): number[] => {
    try {
      return JSON.parse(s.lane_errors) as number[];
    } catch {
      return [];
    }
  };
  const laneCount = Math.max(0, ...o.samples.map((s) => lanesOf(s).length));
  const ber = receivers.flatMap((r, ri) =>
    Array.from({ length: laneCount }, (_, lane) => ({
      label: `${r.replace('|', ' cage ')} lane ${lane}`,
      values: times.map((t) => {
        const s = at.get(`${r}|${t}`);
        const n = s ? lanesOf(s)[lane] : undefined;
        // log10 of the lane's BER over the bucket (a bucket without errors has no point: its BER is below what it can show)
        return s && n !== undefined && n > 0 && s.seconds > 0 ? Math.log10(n / (s.seconds * (SERIAL_RATE_BPS / laneCount))) : null;
      }),
      colour: LANE_COLOURS[lane % LANE_COLOURS.length]!,
      style: ri === 0 ? ('line' as const) : ('points' as const),
    })),
  );
  const temp = receivers.map((r, ri) => ({
    label: `${r.replace('|', ' cage ')} NIC °C`,
    values: times.map((t) => at.get(`${r}|${t}`)?.nic_temp_c ?? null),
    colour: LANE_COLOURS[ri % LANE_COLOURS.length]!,
    style: 'line' as const,
  }));
  const drops = o.events.filter((e) => e.type === 'link-down');
  const alarms = o.events.filter((e) => e.type === 'alarm' || e.type === 'clear');
  const status = o.events.find((e) => e.type === 'status');
  const charts = o.samples.length
    ? chartSpec('service-ber', {
        title: `Pre-FEC BER per receiver lane in service, per 5-minute bucket (log10; the RS-FEC design input is -3.6); ${drops.length} link drop(s)`,
        kind: 'points',
        x,
        xLabel: 'hours watched',
        yLabel: 'log10 pre-FEC BER',
        series: [...ber, { label: 'RS-FEC design input 2.4e-4', values: x.map(() => Math.log10(2.4e-4)), colour: OUTCOME_COLOURS['FAIL']!, style: 'dash' }],
      }) +
      chartSpec('service-temp', {
        title: 'NIC temperature in service (°C, mean per bucket)',
        kind: 'points',
        x,
        xLabel: 'hours watched',
        yLabel: '°C',
        series: temp,
      })
    : '';
  const dropRows = drops
    .map((e) => {
      const d = detailOf(e);
      return `<tr class="FAIL"><td class="code">${esc(e.at)}</td><td>${esc(String(e.node ?? ''))} cage ${esc(String(e.cage ?? ''))}</td><td class="num">${esc(String(d['resets'] ?? ''))}</td><td>${esc(String(d['cause'] ?? ''))}</td><td>${esc(e.message ?? '')}${snapshotHtml(e)}</td></tr>`;
    })
    .join('');
  const alarmRows = alarms
    .map(
      (e) =>
        `<tr class="${e.type === 'alarm' ? esc(e.grade ?? '') : ''}"><td class="code">${esc(e.at)}</td><td>${esc(e.type)}</td><td>${esc(e.rule ?? '')}</td><td>${esc(e.grade ?? '')}</td><td>${esc(String(e.node ?? ''))} cage ${esc(String(e.cage ?? ''))}${e.lane !== null ? ` lane ${e.lane}` : ''}</td><td class="reason">${esc(e.message ?? '')}</td></tr>`,
    )
    .join('');
  return `<h2>In service</h2>
<p id="service-summary">Watched from ${esc(o.samples[0]?.at ?? o.events.at(-1)!.at)} to ${esc(o.samples.at(-1)?.at ?? o.events[0]!.at)}: <b>${drops.length} link drop(s)</b>, ${alarms.filter((e) => e.type === 'alarm').length} alarm(s) raised.${status ? ` Last status: ${esc(status.message ?? '')}` : ''}</p>
${charts}
<h3>Link drops (${drops.length})</h3>
<table id="link-downs"><thead><tr><th>at</th><th>seen by</th><th>drop</th><th>cause</th><th>what both ends showed while down</th></tr></thead><tbody>${dropRows || '<tr><td colspan="5" class="muted">none</td></tr>'}</tbody></table>
<h3>Alarms (${alarms.length})</h3>
<table id="alarms"><thead><tr><th>at</th><th>event</th><th>rule</th><th>grade</th><th>where</th><th>message</th></tr></thead><tbody>${alarmRows || '<tr><td colspan="6" class="muted">none</td></tr>'}</tbody></table>`;
}

// Every cable in service, newest first, with its state.
export function fleetPage(rows: FleetRow[]): string {
  const body = rows.length
    ? `<table id="fleet"><thead><tr><th>cable</th><th>link</th><th>last seen</th><th>link drops</th><th>alarms raised / cleared</th><th>last status</th></tr></thead><tbody>${rows
        .map((r) => {
          const drops = Number(r.link_downs);
          const open = Number(r.alarms) - Number(r.clears);
          const cls = drops > 0 ? 'FAIL' : open > 0 ? 'MARGINAL' : 'PASS';
          return `<tr class="${cls}"><td><a href="${href('/cables/{}', r.serial)}">${esc(r.serial)}</a></td><td class="code">${esc(r.cable ?? '')}</td><td class="code">${esc(r.last_at)}</td><td class="num">${drops}</td><td class="num">${Number(r.alarms)} / ${Number(r.clears)}</td><td class="reason">${esc(r.status ?? '')}</td></tr>`;
        })
        .join('')}</tbody></table>`
    : '<p class="muted">No cable has been watched in service yet (cablequal watch --nodes a,b).</p>';
  return layout({ title: 'Fleet in service', path: '/fleet', body });
}
