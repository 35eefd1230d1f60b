// ethtool 6.7 output for a simulated mlx5 netdev: `-S` (full ~1,500-line mlx5 dump), link settings, `-I --show-fec`.
import type { PortCounters, RailCounters } from './model.js';

const CHANNELS = 20; // GB10 has 20 cores, mlx5 opens one channel per core

const SW_HEAD = [
  'rx_packets', 'rx_bytes', 'tx_packets', 'tx_bytes', 'tx_tso_packets', 'tx_tso_bytes', 'tx_tso_inner_packets',
  'tx_tso_inner_bytes', 'tx_added_vlan_packets', 'tx_nop', 'tx_mpwqe_blks', 'tx_mpwqe_pkts', 'rx_lro_packets',
  'rx_lro_bytes', 'rx_gro_packets', 'rx_gro_bytes', 'rx_gro_skbs', 'rx_gro_match_packets', 'rx_gro_large_hds',
  'rx_ecn_mark', 'rx_removed_vlan_packets', 'rx_csum_unnecessary', 'rx_csum_none', 'rx_csum_complete',
  'rx_csum_complete_tail', 'rx_csum_complete_tail_slow', 'rx_csum_unnecessary_inner', 'rx_xdp_drop',
  'rx_xdp_redirect', 'rx_xdp_tx_xmit', 'rx_xdp_tx_mpwqe', 'rx_xdp_tx_inlnw', 'rx_xdp_tx_nops', 'rx_xdp_tx_full',
  'rx_xdp_tx_err', 'rx_xdp_tx_cqe', 'tx_csum_none', 'tx_csum_partial', 'tx_csum_partial_inner', 'tx_queue_stopped',
  'tx_queue_dropped', 'tx_xmit_more', 'tx_recover', 'tx_cqes', 'tx_queue_wake', 'tx_cqe_err', 'tx_xdp_xmit',
  'tx_xdp_mpwqe', 'tx_xdp_inlnw', 'tx_xdp_nops', 'tx_xdp_full', 'tx_xdp_err', 'tx_xdp_cqes', 'rx_wqe_err',
  'rx_mpwqe_filler_cqes', 'rx_mpwqe_filler_strides', 'rx_oversize_pkts_sw_drop', 'rx_buff_alloc_err',
  'rx_cqe_compress_blks', 'rx_cqe_compress_pkts', 'rx_congst_umr', 'rx_arfs_err', 'rx_recover', 'rx_pp_alloc_fast',
  'rx_pp_alloc_slow', 'rx_pp_alloc_slow_high_order', 'rx_pp_alloc_empty', 'rx_pp_alloc_refill', 'rx_pp_alloc_waive',
  'rx_pp_recycle_cached', 'rx_pp_recycle_cache_full', 'rx_pp_recycle_ring', 'rx_pp_recycle_ring_full',
  'rx_pp_recycle_released_ref', 'rx_xsk_packets', 'rx_xsk_bytes', 'rx_xsk_csum_complete', 'rx_xsk_csum_unnecessary',
  'rx_xsk_csum_unnecessary_inner', 'rx_xsk_csum_none', 'rx_xsk_ecn_mark', 'rx_xsk_removed_vlan_packets',
  'rx_xsk_xdp_drop', 'rx_xsk_xdp_redirect', 'rx_xsk_wqe_err', 'rx_xsk_mpwqe_filler_cqes',
  'rx_xsk_mpwqe_filler_strides', 'rx_xsk_oversize_pkts_sw_drop', 'rx_xsk_buff_alloc_err', 'rx_xsk_cqe_compress_blks',
  'rx_xsk_cqe_compress_pkts', 'rx_xsk_congst_umr', 'tx_xsk_xmit', 'tx_xsk_mpwqe', 'tx_xsk_inlnw', 'tx_xsk_full',
  'tx_xsk_err', 'tx_xsk_cqes', 'ch_events', 'ch_poll', 'ch_arm', 'ch_aff_change', 'ch_force_irq', 'ch_eq_rearm',
  'rx_out_of_buffer', 'rx_if_down_packets',
];
const VPORT = ['unicast', 'multicast', 'broadcast'];
const PHY_HIST = [
  'rx_undersize_pkts_phy', 'rx_fragments_phy', 'rx_jabbers_phy', 'rx_64_bytes_phy', 'rx_65_to_127_bytes_phy',
  'rx_128_to_255_bytes_phy', 'rx_256_to_511_bytes_phy', 'rx_512_to_1023_bytes_phy', 'rx_1024_to_1518_bytes_phy',
  'rx_1519_to_2047_bytes_phy', 'rx_2048_to_4095_bytes_phy', 'rx_4096_to_8191_bytes_phy', 'rx_8192_to_10239_bytes_phy',
];
const CH = ['events', 'poll', 'arm', 'aff_change', 'force_irq', 'eq_rearm'];
const RXQ = [
  'packets', 'bytes', 'csum_complete', 'csum_complete_tail', 'csum_complete_tail_slow', 'csum_unnecessary',
  'csum_unnecessary_inner', 'csum_none', 'xdp_drop', 'xdp_redirect', 'lro_packets', 'lro_bytes', 'gro_packets',
  'gro_bytes', 'gro_skbs', 'gro_match_packets', 'gro_large_hds', 'ecn_mark', 'removed_vlan_packets', 'wqe_err',
  'mpwqe_filler_cqes', 'mpwqe_filler_strides', 'oversize_pkts_sw_drop', 'buff_alloc_err', 'cqe_compress_blks',
  'cqe_compress_pkts', 'congst_umr', 'arfs_err', 'recover', 'pp_alloc_fast', 'pp_alloc_slow',
  'pp_alloc_slow_high_order', 'pp_alloc_empty', 'pp_alloc_refill', 'pp_alloc_waive', 'pp_recycle_cached',
  'pp_recycle_cache_full', 'pp_recycle_ring', 'pp_recycle_ring_full', 'pp_recycle_released_ref', 'xdp_tx_xmit',
  'xdp_tx_mpwqe', 'xdp_tx_inlnw', 'xdp_tx_nops', 'xdp_tx_full', 'xdp_tx_err', 'xdp_tx_cqes',
];
const TXQ = [
  'packets', 'bytes', 'tso_packets', 'tso_bytes', 'tso_inner_packets', 'tso_inner_bytes', 'csum_partial',
  'csum_partial_inner', 'added_vlan_packets', 'nop', 'mpwqe_blks', 'mpwqe_pkts', 'csum_none', 'stopped', 'dropped',
  'xmit_more', 'recover', 'cqes', 'wake', 'cqe_err',
];

// What one netdev's `ethtool -S` shows: its own rail's counters plus the cage's shared physical-port counters.
export interface StatsView {
  cabled: boolean;
  port: PortCounters; // physical port (identical on both netdevs of a cage)
  rail: RailCounters; // this PCIe function's RDMA traffic
  hostPackets: number; // software (kernel stack) packets of this netdev, e.g. ssh and ARP
  portHostPackets: number; // the same traffic as the shared physical port counts it
  uncorrectableAsCrc: boolean;
}

// `ethtool -S <if>` of mlx5: `NIC statistics:` then `     name: value` lines, *_phy counters from the shared port.
export function formatEthtoolStats(v: StatsView, keep?: RegExp): string {
  // The sampler's per-tick `| grep -E PHY_LINES` keeps the header and the *_phy block only: once a whole dump
  // has shown that for this filter, build just those (~40 of ~1,700 lines; same text as filtering the whole dump).
  const entry = keep ? keptEntry(keep) : null;
  if (keep && entry?.phyOnly) {
    const lines: string[] = keep.test('NIC statistics:') ? ['NIC statistics:'] : [];
    putPhy(v, (name, value) => {
      if (entry.names.get(name)) lines.push(`     ${name}: ${Math.max(0, Math.floor(value))}`);
    });
    return `${lines.join('\n')}\n`;
  }
  const p = v.port;
  const sw = new Map<string, number>();
  const hp = Math.floor(v.hostPackets);
  sw.set('rx_packets', hp).set('rx_bytes', hp * 312).set('tx_packets', Math.floor(hp * 0.8)).set('tx_bytes', Math.floor(hp * 0.8) * 198);
  sw.set('rx_csum_complete', hp).set('tx_csum_partial', Math.floor(hp * 0.7)).set('tx_csum_none', Math.floor(hp * 0.1));
  sw.set('ch_events', Math.floor(hp * 1.1)).set('ch_poll', Math.floor(hp * 1.2)).set('ch_arm', Math.floor(hp * 1.1));
  sw.set('tx_cqes', Math.floor(hp * 0.8));
  const lines: string[] = ['NIC statistics:'];
  // A pipe into grep drops most lines: skip building them (the sampler reads only *_phy every tick).
  // Whether a counter's line survives the grep depends on its name only (the value is digits), so it is cached.
  const kept = keep ? keptNames(keep) : null;
  const put = kept
    ? (name: string, value: number) => {
        let k = kept.get(name);
        if (k === undefined) {
          k = keep!.test(`     ${name}: 0`);
          kept.set(name, k);
        }
        if (k) lines.push(`     ${name}: ${Math.max(0, Math.floor(value))}`);
      }
    : (name: string, value: number) => lines.push(`     ${name}: ${Math.max(0, Math.floor(value))}`);
  if (keep && !keep.test(lines[0]!)) lines.pop();
  const channels = !kept || [...CH.map((n) => `ch0_${n}`), ...RXQ.map((n) => `rx0_${n}`), ...TXQ.map((n) => `tx0_${n}`)].some((n) => keep!.test(`     ${n}: 0`) || /\d/.test(keep!.source));
  for (const n of SW_HEAD) put(n, sw.get(n) ?? 0);
  for (const dir of ['rx', 'tx']) {
    for (const kind of VPORT) {
      const pk = kind === 'unicast' ? hp : kind === 'multicast' ? hp / 50 : hp / 200;
      put(`${dir}_vport_${kind}_packets`, dir === 'rx' ? pk : pk * 0.8);
      put(`${dir}_vport_${kind}_bytes`, (dir === 'rx' ? pk : pk * 0.8) * 250);
    }
  }
  const r = v.rail;
  put('rx_vport_rdma_unicast_packets', r.rxPackets);
  put('rx_vport_rdma_unicast_bytes', r.rxBytes);
  put('tx_vport_rdma_unicast_packets', r.txPackets);
  put('tx_vport_rdma_unicast_bytes', r.txBytes);
  for (const n of ['rx_vport_rdma_multicast_packets', 'rx_vport_rdma_multicast_bytes', 'tx_vport_rdma_multicast_packets', 'tx_vport_rdma_multicast_bytes']) put(n, 0);
  putPhy(v, put);
  for (const n of ['rx_pci_signal_integrity', 'tx_pci_signal_integrity', 'outbound_pci_stalled_rd', 'outbound_pci_stalled_wr', 'outbound_pci_stalled_rd_events', 'outbound_pci_stalled_wr_events']) put(n, 0);
  for (let prio = 0; prio < 8; prio++) {
    put(`rx_prio${prio}_bytes`, prio === 0 ? p.rxBytes : 0);
    put(`rx_prio${prio}_packets`, prio === 0 ? p.rxPackets : 0);
    put(`rx_prio${prio}_discards`, 0);
    put(`tx_prio${prio}_bytes`, prio === 0 ? p.txBytes : 0);
    put(`tx_prio${prio}_packets`, prio === 0 ? p.txPackets : 0);
  }
  put('tx_pause_storm_warning_events', 0);
  put('tx_pause_storm_error_events', 0);
  for (const n of ['module_unplug', 'module_bus_stuck', 'module_high_temp', 'module_bad_shorted']) put(n, 0);
  const share = (total: number, i: number) => Math.floor(total / CHANNELS) + (i < total % CHANNELS ? 1 : 0);
  // Per-channel counters (~1,300 lines): skipped as a block when the filter can match none of them.
  if (channels) {
    for (let i = 0; i < CHANNELS; i++) for (const n of CH) put(`ch${i}_${n}`, share(sw.get(`ch_${n}`) ?? 0, i));
    for (let i = 0; i < CHANNELS; i++) for (const n of RXQ) put(`rx${i}_${n}`, share(sw.get(`rx_${n}`) ?? 0, i));
    for (let i = 0; i < CHANNELS; i++) for (const n of TXQ) put(`tx${i}_${n}`, share(sw.get(`tx_${n}`) ?? 0, i));
  }
  if (entry && kept) entry.phyOnly = [...kept].every(([name, k]) => !k || name.endsWith('_phy'));
  return `${lines.join('\n')}\n`;
}

// Per filter: which counter names survive it, and (once one whole dump was filtered) whether only *_phy ones do.
const keptCache = new Map<string, { names: Map<string, boolean>; phyOnly?: boolean }>();
function keptNames(re: RegExp): Map<string, boolean> {
  return keptEntry(re).names;
}
function keptEntry(re: RegExp): { names: Map<string, boolean>; phyOnly?: boolean } {
  let m = keptCache.get(re.source);
  if (!m) keptCache.set(re.source, (m = { names: new Map() }));
  return m;
}

// The physical-port (*_phy) block, in the driver's order.
function putPhy(v: StatsView, put: (name: string, value: number) => void): void {
  const p = v.port;
  const crc = v.uncorrectableAsCrc ? p.uncorrectable : 0;
  put('tx_packets_phy', p.txPackets);
  put('rx_packets_phy', p.rxPackets);
  put('rx_crc_errors_phy', crc);
  put('tx_bytes_phy', p.txBytes);
  put('rx_bytes_phy', p.rxBytes);
  put('tx_multicast_phy', v.cabled ? v.portHostPackets / 60 : 0);
  put('tx_broadcast_phy', v.cabled ? 2 : 0);
  put('rx_multicast_phy', v.cabled ? v.portHostPackets / 50 : 0);
  put('rx_broadcast_phy', v.cabled ? v.portHostPackets / 200 : 0);
  put('rx_in_range_len_errors_phy', 0);
  put('rx_out_of_range_len_phy', 0);
  put('rx_oversize_pkts_phy', 0);
  put('rx_symbol_err_phy', crc);
  put('tx_mac_control_phy', 0);
  put('rx_mac_control_phy', 0);
  put('rx_unsupported_op_phy', 0);
  put('rx_pause_ctrl_phy', 0);
  put('tx_pause_ctrl_phy', 0);
  put('rx_discards_phy', 0);
  put('tx_discards_phy', 0);
  put('tx_errors_phy', 0);
  for (const n of PHY_HIST) put(n, n === 'rx_1024_to_1518_bytes_phy' ? p.rxPackets : 0);
  put('link_down_events_phy', p.linkDown);
  put('rx_pcs_symbol_err_phy', p.uncorrectable);
  put('rx_corrected_bits_phy', p.correctedBits);
  for (let l = 0; l < 4; l++) put(`rx_err_lane_${l}_phy`, p.lanes[l]!);
  put('rx_buffer_passed_thres_phy', 0);
}

// One malformed `ethtool -S` answer (garbage-output fault): cut short mid-line with binary noise, as a broken pipe gives.
export function garbleStats(text: string): string {
  const cut = text.indexOf('rx_corrected_bits_phy');
  return `${text.slice(0, cut > 0 ? cut : 200)}rx_corr\u0000\u0000\ufffd\u001b[0m@@\u0007\n     rx_err_lane_0_phy: -1\n`;
}

const MODES = [
  '1000baseKX/Full', '10000baseKR/Full', '40000baseKR4/Full', '40000baseCR4/Full', '40000baseSR4/Full',
  '40000baseLR4/Full', '25000baseCR/Full', '25000baseKR/Full', '25000baseSR/Full', '50000baseCR2/Full',
  '50000baseKR2/Full', '100000baseKR4/Full', '100000baseSR4/Full', '100000baseCR4/Full', '100000baseLR4_ER4/Full',
  '50000baseSR2/Full', '1000baseX/Full', '10000baseCR/Full', '10000baseSR/Full', '10000baseLR/Full', '10000baseER/Full',
  '50000baseKR/Full', '50000baseSR/Full', '50000baseCR/Full', '50000baseLR_ER_FR/Full', '50000baseDR/Full',
  '100000baseKR2/Full', '100000baseSR2/Full', '100000baseCR2/Full', '100000baseLR2_ER2_FR2/Full', '100000baseDR2/Full',
  '200000baseKR4/Full', '200000baseSR4/Full', '200000baseLR4_ER4_FR4/Full', '200000baseDR4/Full', '200000baseCR4/Full',
];

function modeList(label: string, modes: string[]): string {
  const head = `${label}:`.padEnd(24);
  return modes.map((m, i) => (i === 0 ? `\t${head}${m}` : `\t${' '.repeat(24)}${m}`)).join('\n');
}

// `ethtool <if>` (ethtool 6.7 netlink, run without root: the wake-on lines are refused and stderr says so).
export function formatEthtoolLink(iface: string, v: { cabled: boolean; up: boolean; lanes: number; linkDownEvents: number; speedMbps?: number }): string {
  const lines = [
    `Settings for ${iface}:`,
    '\tSupported ports: [ Backplane ]',
    modeList('Supported link modes', MODES),
    '\tSupported pause frame use: Symmetric',
    '\tSupports auto-negotiation: Yes',
    '\tSupported FEC modes: None\t RS\t BASER',
    modeList('Advertised link modes', MODES),
    '\tAdvertised pause frame use: Symmetric',
    '\tAdvertised auto-negotiation: Yes',
    '\tAdvertised FEC modes: None\t RS\t BASER',
  ];
  if (v.up) {
    lines.push(`\tSpeed: ${v.speedMbps ?? 200000}Mb/s`, `\tLanes: ${v.lanes}`, '\tDuplex: Full');
  } else {
    lines.push('\tSpeed: Unknown!', '\tDuplex: Unknown! (255)');
  }
  lines.push(
    '\tAuto-negotiation: on',
    `\tPort: ${v.cabled ? 'Direct Attach Copper' : 'Other'}`,
    '\tPHYAD: 0',
    '\tTransceiver: internal',
    `\tLink detected: ${v.up ? 'yes' : 'no'}`,
    `\tLink Down Events: ${v.linkDownEvents}`,
  );
  return `${lines.join('\n')}\n`;
}

// `ethtool -I --show-fec <if>` in the ethtool 6.7 layout; mlx5 in RS mode gives totals only (no per-lane lines).
export function formatEthtoolFec(iface: string, v: { cabled: boolean; port: PortCounters }): string {
  const head = `FEC parameters for ${iface}:\nSupported/Configured FEC encodings: Auto RS BaseR\n`;
  if (!v.cabled) return `${head}Active FEC encoding: None\n`;
  return (
    `${head}Active FEC encoding: RS\nStatistics:\n` +
    `  corrected_blocks: ${v.port.correctedBlocks}\n` +
    `  uncorrectable_blocks: ${v.port.uncorrectable}\n` +
    `  corrected_bits: ${v.port.correctedBits}\n`
  );
}
