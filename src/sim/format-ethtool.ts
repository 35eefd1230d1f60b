// ethtool 6.7 output for a simulated mlx5 netdev: `-S` (full ~1,500-line mlx5 dump), link settings, `[-I] --show-fec`.
// Generated, not recorded; layouts from the ethtool and mlx5 sources named below and the real samples in samples/.
import type { PortCounters, RailCounters } from './model.js';

const CHANNELS = 20; // GB10 has 20 cores, mlx5 opens one channel per core

const SW_HEAD = [
  'rx_packets',
  'rx_bytes',
  'tx_packets',
  'tx_bytes',
  'tx_tso_packets',
  'tx_tso_bytes',
  'tx_tso_inner_packets',
  'tx_tso_inner_bytes',
  'tx_added_vlan_packets',
  'tx_nop',
  'tx_mpwqe_blks',
  'tx_mpwqe_pkts',
  'rx_lro_packets',
  'rx_lro_bytes',
  'rx_gro_packets',
  'rx_gro_bytes',
  'rx_gro_skbs',
  'rx_gro_match_packets',
  'rx_gro_large_hds',
  'rx_ecn_mark',
  'rx_removed_vlan_packets',
  'rx_csum_unnecessary',
  'rx_csum_none',
  'rx_csum_complete',
  'rx_csum_complete_tail',
  'rx_csum_complete_tail_slow',
  'rx_csum_unnecessary_inner',
  'rx_xdp_drop',
  'rx_xdp_redirect',
  'rx_xdp_tx_xmit',
  'rx_xdp_tx_mpwqe',
  'rx_xdp_tx_inlnw',
  'rx_xdp_tx_nops',
  'rx_xdp_tx_full',
  'rx_xdp_tx_err',
  'rx_xdp_tx_cqe',
  'tx_csum_none',
  'tx_csum_partial',
  'tx_csum_partial_inner',
  'tx_queue_stopped',
  'tx_queue_dropped',
  'tx_xmit_more',
  'tx_recover',
  'tx_cqes',
  'tx_queue_wake',
  'tx_cqe_err',
  'tx_xdp_xmit',
  'tx_xdp_mpwqe',
  'tx_xdp_inlnw',
  'tx_xdp_nops',
  'tx_xdp_full',
  'tx_xdp_err',
  'tx_xdp_cqes',
  'rx_wqe_err',
  'rx_mpwqe_filler_cqes',
  'rx_mpwqe_filler_strides',
  'rx_oversize_pkts_sw_drop',
  'rx_buff_alloc_err',
  'rx_cqe_compress_blks',
  'rx_cqe_compress_pkts',
  'rx_congst_umr',
  'rx_arfs_err',
  'rx_recover',
  'rx_pp_alloc_fast',
  'rx_pp_alloc_slow',
  'rx_pp_alloc_slow_high_order',
  'rx_pp_alloc_empty',
  'rx_pp_alloc_refill',
  'rx_pp_alloc_waive',
  'rx_pp_recycle_cached',
  'rx_pp_recycle_cache_full',
  'rx_pp_recycle_ring',
  'rx_pp_recycle_ring_full',
  'rx_pp_recycle_released_ref',
  'rx_xsk_packets',
  'rx_xsk_bytes',
  'rx_xsk_csum_complete',
  'rx_xsk_csum_unnecessary',
  'rx_xsk_csum_unnecessary_inner',
  'rx_xsk_csum_none',
  'rx_xsk_ecn_mark',
  'rx_xsk_removed_vlan_packets',
  'rx_xsk_xdp_drop',
  'rx_xsk_xdp_redirect',
  'rx_xsk_wqe_err',
  'rx_xsk_mpwqe_filler_cqes',
  'rx_xsk_mpwqe_filler_strides',
  'rx_xsk_oversize_pkts_sw_drop',
  'rx_xsk_buff_alloc_err',
  'rx_xsk_cqe_compress_blks',
  'rx_xsk_cqe_compress_pkts',
  'rx_xsk_congst_umr',
  'tx_xsk_xmit',
  'tx_xsk_mpwqe',
  'tx_xsk_inlnw',
  'tx_xsk_full',
  'tx_xsk_err',
  'tx_xsk_cqes',
  'ch_events',
  'ch_poll',
  'ch_arm',
  'ch_aff_change',
  'ch_force_irq',
  'ch_eq_rearm',
  'rx_out_of_buffer',
  'rx_if_down_packets',
];
const VPORT = ['unicast', 'multicast', 'broadcast'] as const;
const PHY_HIST = [
  'rx_undersize_pkts_phy',
  'rx_fragments_phy',
  'rx_jabbers_phy',
  'rx_64_bytes_phy',
  'rx_65_to_127_bytes_phy',
  'rx_128_to_255_bytes_phy',
  'rx_256_to_511_bytes_phy',
  'rx_512_to_1023_bytes_phy',
  'rx_1024_to_1518_bytes_phy',
  'rx_1519_to_2047_bytes_phy',
  'rx_2048_to_4095_bytes_phy',
  'rx_4096_to_8191_bytes_phy',
  'rx_8192_to_10239_bytes_phy',
];
const CH = ['events', 'poll', 'arm', 'aff_change', 'force_irq', 'eq_rearm'];
const RXQ = [
  'packets',
  'bytes',
  'csum_complete',
  'csum_complete_tail',
  'csum_complete_tail_slow',
  'csum_unnecessary',
  'csum_unnecessary_inner',
  'csum_none',
  'xdp_drop',
  'xdp_redirect',
  'lro_packets',
  'lro_bytes',
  'gro_packets',
  'gro_bytes',
  'gro_skbs',
  'gro_match_packets',
  'gro_large_hds',
  'ecn_mark',
  'removed_vlan_packets',
  'wqe_err',
  'mpwqe_filler_cqes',
  'mpwqe_filler_strides',
  'oversize_pkts_sw_drop',
  'buff_alloc_err',
  'cqe_compress_blks',
  'cqe_compress_pkts',
  'congst_umr',
  'arfs_err',
  'recover',
  'pp_alloc_fast',
  'pp_alloc_slow',
  'pp_alloc_slow_high_order',
  'pp_alloc_empty',
  'pp_alloc_refill',
  'pp_alloc_waive',
  'pp_recycle_cached',
  'pp_recycle_cache_full',
  'pp_recycle_ring',
  'pp_recycle_ring_full',
  'pp_recycle_released_ref',
  'xdp_tx_xmit',
  'xdp_tx_mpwqe',
  'xdp_tx_inlnw',
  'xdp_tx_nops',
  'xdp_tx_full',
  'xdp_tx_err',
  'xdp_tx_cqes',
];
const TXQ = [
  'packets',
  'bytes',
  'tso_packets',
  'tso_bytes',
  'tso_inner_packets',
  'tso_inner_bytes',
  'csum_partial',
  'csum_partial_inner',
  'added_vlan_packets',
  'nop',
  'mpwqe_blks',
  'mpwqe_pkts',
  'csum_none',
  'stopped',
  'dropped',
  'xmit_more',
  'recover',
  'cqes',
  'wake',
  'cqe_err',
];

// Kernel-stack frames (not RDMA) of one PCIe function per direction, counted since its driver loaded.
export interface FrameCounts {
  unicast: number;
  multicast: number;
  broadcast: number;
}
export interface HostTraffic {
  rx: FrameCounts;
  tx: FrameCounts;
}

// Frame sizes of the generated kernel-stack traffic, on the wire with the 4-byte FCS: unicast (TCP/IP control
// traffic), multicast (IPv6 ND, mDNS), broadcast (ARP, 60 bytes + FCS). RDMA frames are the model's (1082 bytes).
const FRAME = { unicast: 316, multicast: 110, broadcast: 64 } as const;
const FCS = 4;

// What one netdev's `ethtool -S` shows: its own function's counters, and the cage's physical-port (*_phy)
// counters, which count the frames of both functions of the cage (so both netdevs read the same *_phy values).
export interface StatsView {
  cabled: boolean;
  port: PortCounters; // the port's RDMA frames and PHY errors (model); bytes include the FCS
  rail: RailCounters; // this PCIe function's RDMA traffic
  host: HostTraffic; // this PCIe function's kernel-stack frames
  portHost: HostTraffic; // the kernel-stack frames of both functions of the cage, as the port counts them
  uncorrectableAsCrc: boolean;
  recoveryCounter?: boolean; // the kernel prints total_success_recovery_phy (after the lanes, en_stats.c's phy group)
}

const sumFrames = (c: FrameCounts) => c.unicast + c.multicast + c.broadcast;
const frameBytes = (c: FrameCounts, fcs: number) =>
  c.unicast * (FRAME.unicast - fcs) + c.multicast * (FRAME.multicast - fcs) + c.broadcast * (FRAME.broadcast - fcs);

// `ethtool -S <if>` of mlx5: `NIC statistics:` then `     name: value` lines. The counters agree with each other as
// a real dump's do (samples/ethtool-stats/mlx5-100g-...): the size bins sum to rx_packets_phy, rx_prio0_* equal the
// port totals, and each *_phy total is the sum over both functions' vport (kernel + RDMA) counters plus the FCS.
export function formatEthtoolStats(v: StatsView, keep?: RegExp): string {
  // The sampler's per-tick `| grep -E PHY_LINES` keeps the header and the *_phy block only: once a whole dump
  // has shown that for this filter, build just those (~40 of ~1,700 lines; same text as filtering the whole dump).
  const entry = keep ? keptEntry(keep) : null;
  if (keep && entry?.phyOnly) {
    const lines: string[] = keep.test('NIC statistics:') ? ['NIC statistics:'] : [];
    putPhy(v, (name, value) => {
      let k = entry.names.get(name);
      if (k === undefined) entry.names.set(name, (k = keep.test(`     ${name}: 0`))); // a counter another node lacks
      if (k) lines.push(`     ${name}: ${Math.max(0, Math.floor(value))}`);
    });
    return `${lines.join('\n')}\n`;
  }
  const { host } = v;
  const sw = new Map<string, number>();
  const rxPk = sumFrames(host.rx);
  const txPk = sumFrames(host.tx);
  sw.set('rx_packets', rxPk).set('rx_bytes', frameBytes(host.rx, FCS)).set('tx_packets', txPk).set('tx_bytes', frameBytes(host.tx, FCS));
  sw.set('rx_csum_complete', rxPk)
    .set('tx_csum_partial', host.tx.unicast)
    .set('tx_csum_none', host.tx.multicast + host.tx.broadcast);
  sw.set('ch_events', Math.floor((rxPk + txPk) * 0.6))
    .set('ch_poll', Math.floor((rxPk + txPk) * 0.7))
    .set('ch_arm', Math.floor((rxPk + txPk) * 0.6));
  sw.set('tx_cqes', txPk);
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
  const channels =
    !kept ||
    [...CH.map((n) => `ch0_${n}`), ...RXQ.map((n) => `rx0_${n}`), ...TXQ.map((n) => `tx0_${n}`)].some(
      (n) => keep!.test(`     ${n}: 0`) || /\d/.test(keep!.source),
    );
  for (const n of SW_HEAD) put(n, sw.get(n) ?? 0);
  for (const [dir, c] of [
    ['rx', host.rx],
    ['tx', host.tx],
  ] as const) {
    for (const kind of VPORT) {
      put(`${dir}_vport_${kind}_packets`, c[kind]);
      put(`${dir}_vport_${kind}_bytes`, c[kind] * (FRAME[kind] - FCS));
    }
  }
  const r = v.rail;
  put('rx_vport_rdma_unicast_packets', r.rxPackets);
  put('rx_vport_rdma_unicast_bytes', r.rxBytes - FCS * r.rxPackets);
  put('tx_vport_rdma_unicast_packets', r.txPackets);
  put('tx_vport_rdma_unicast_bytes', r.txBytes - FCS * r.txPackets);
  for (const n of ['rx_vport_rdma_multicast_packets', 'rx_vport_rdma_multicast_bytes', 'tx_vport_rdma_multicast_packets', 'tx_vport_rdma_multicast_bytes'])
    put(n, 0);
  putPhy(v, put);
  for (const n of [
    'rx_pci_signal_integrity',
    'tx_pci_signal_integrity',
    'outbound_pci_stalled_rd',
    'outbound_pci_stalled_wr',
    'outbound_pci_stalled_rd_events',
    'outbound_pci_stalled_wr_events',
  ])
    put(n, 0);
  const t = phyTotals(v);
  for (let prio = 0; prio < 8; prio++) {
    put(`rx_prio${prio}_bytes`, prio === 0 ? t.rxBytes : 0);
    put(`rx_prio${prio}_packets`, prio === 0 ? t.rxPackets : 0);
    put(`rx_prio${prio}_discards`, 0);
    put(`tx_prio${prio}_bytes`, prio === 0 ? t.txBytes : 0);
    put(`tx_prio${prio}_packets`, prio === 0 ? t.txPackets : 0);
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

// The physical port's frame and byte totals per direction: RDMA frames plus both functions' kernel-stack frames.
function phyTotals(v: StatsView): { rxPackets: number; rxBytes: number; txPackets: number; txBytes: number } {
  const p = v.port;
  const h = v.portHost;
  return {
    rxPackets: Math.floor(p.rxPackets) + sumFrames(h.rx),
    rxBytes: Math.floor(p.rxBytes) + frameBytes(h.rx, 0),
    txPackets: Math.floor(p.txPackets) + sumFrames(h.tx),
    txBytes: Math.floor(p.txBytes) + frameBytes(h.tx, 0),
  };
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
  const h = v.portHost;
  const t = phyTotals(v);
  const crc = v.uncorrectableAsCrc ? p.crcFrames : 0;
  put('tx_packets_phy', t.txPackets);
  put('rx_packets_phy', t.rxPackets);
  put('rx_crc_errors_phy', crc);
  put('tx_bytes_phy', t.txBytes);
  put('rx_bytes_phy', t.rxBytes);
  put('tx_multicast_phy', h.tx.multicast);
  put('tx_broadcast_phy', h.tx.broadcast);
  put('rx_multicast_phy', h.rx.multicast);
  put('rx_broadcast_phy', h.rx.broadcast);
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
  // Received frames by size on the wire: ARP 64, multicast 65-127, unicast 256-511, RDMA (1082) 1024-1518.
  const bins: Record<string, number> = {
    rx_64_bytes_phy: h.rx.broadcast,
    rx_65_to_127_bytes_phy: h.rx.multicast,
    rx_256_to_511_bytes_phy: h.rx.unicast,
    rx_1024_to_1518_bytes_phy: Math.floor(p.rxPackets),
  };
  for (const n of PHY_HIST) put(n, bins[n] ?? 0);
  put('link_down_events_phy', p.linkDown);
  put('rx_pcs_symbol_err_phy', p.pcsSymbolErrors);
  put('rx_corrected_bits_phy', p.correctedBits);
  for (let l = 0; l < 4; l++) put(`rx_err_lane_${l}_phy`, p.lanes[l]!);
  if (v.recoveryCounter) put('total_success_recovery_phy', p.recoveries);
  put('rx_buffer_passed_thres_phy', 0);
}

// One malformed `ethtool -S` answer (garbage-output fault): cut short mid-line with binary noise, as a broken pipe gives.
export function garbleStats(text: string): string {
  const cut = text.indexOf('rx_corrected_bits_phy');
  return `${text.slice(0, cut > 0 ? cut : 200)}rx_corr\u0000\u0000\ufffd\u001b[0m@@\u0007\n     rx_err_lane_0_phy: -1\n`;
}

// The link modes a Spark netdev lists, in ethtool's bit order: the list "stops at 100000baseCR4/Full" on a Spark
// although the link runs at 200000Mb/s (docs/formats.md §0, §3); the modes before it are mlx5's legacy PTYS ones.
const SPARK_LINK_MODES = [
  '1000baseKX/Full',
  '10000baseKR/Full',
  '40000baseKR4/Full',
  '40000baseCR4/Full',
  '40000baseSR4/Full',
  '40000baseLR4/Full',
  '25000baseCR/Full',
  '25000baseKR/Full',
  '25000baseSR/Full',
  '50000baseCR2/Full',
  '50000baseKR2/Full',
  '100000baseKR4/Full',
  '100000baseSR4/Full',
  '100000baseCR4/Full',
];

// dump_link_modes() of ethtool netlink/settings.c: `\t<before><first>`, then `\n\t` + before's width in blanks per mode.
function modeList(before: string, modes: string[]): string {
  return modes.map((m, i) => (i === 0 ? `\t${before}${m}` : `\t${' '.repeat(before.length)}${m}`)).join('\n');
}

// The netlink error a non-root `ethtool <if>` gets for its WOL_GET request (the kernel requires CAP_NET_ADMIN).
const NOT_PERMITTED = 'netlink error: Operation not permitted\n';

// `ethtool <if>` as ethtool 6.7 (netlink/settings.c nl_gset) prints it for an mlx5 netdev: link modes, link info,
// Wake-on (root only), message level (mlx5's default NETIF_MSG_LINK), link state. Without root the WOL request
// fails: stderr says so and stdout has no Wake-on lines. `tty` is what a terminal shows with both streams (the
// error where it happens, before "Current message level", as in docs/formats.md §3's pastes); through a pipe stdout is
// block-buffered until exit, so there the error comes first.
export function formatEthtoolLink(
  iface: string,
  v: { cabled: boolean; up: boolean; lanes: number; linkDownEvents: number; root: boolean; speedMbps?: number; downReason?: string | null },
): { stdout: string; stderr: string; tty: string } {
  const head = [
    `Settings for ${iface}:`,
    // mlx5 maps the PTYS connector type of a direct-attach cable to the FIBRE port bit; an empty cage has none.
    `\tSupported ports: [ ${v.cabled ? 'FIBRE' : ''} ]`,
    modeList('Supported link modes:   ', SPARK_LINK_MODES),
    '\tSupported pause frame use: Symmetric',
    '\tSupports auto-negotiation: Yes',
    '\tSupported FEC modes: None\t RS\t BASER',
    modeList('Advertised link modes:  ', SPARK_LINK_MODES),
    '\tAdvertised pause frame use: Symmetric',
    '\tAdvertised auto-negotiation: Yes',
    '\tAdvertised FEC modes: None\t RS\t BASER',
  ];
  // What a Spark function reports: 200000 Mb/s, or 100000 on some firmware and switch states (docs/formats.md §0).
  if (v.up) head.push(`\tSpeed: ${v.speedMbps ?? 200000}Mb/s`, `\tLanes: ${v.lanes}`, '\tDuplex: Full');
  else head.push('\tSpeed: Unknown!', '\tDuplex: Unknown! (255)');
  head.push('\tAuto-negotiation: on', `\tPort: ${v.cabled ? 'Direct Attach Copper' : 'Other'}`, '\tPHYAD: 0', '\tTransceiver: internal');
  if (v.root) head.push('\tSupports Wake-on: d', '\tWake-on: d');
  const tail = [
    '        Current message level: 0x00000004 (4)',
    '                               link',
    // ethtool netlink/settings.c linkstate_reply_cb: `no (<ext state>[, <substate>])` while the kernel gives a reason.
    `\tLink detected: ${v.up ? 'yes' : v.downReason ? `no (${v.downReason})` : 'no'}`,
    `\tLink Down Events: ${v.linkDownEvents}`,
  ];
  const stderr = v.root ? '' : NOT_PERMITTED;
  const stdout = `${[...head, ...tail].join('\n')}\n`;
  return { stdout, stderr, tty: `${head.join('\n')}\n${stderr}${tail.join('\n')}\n` };
}

// `ethtool [-I] --show-fec <if>` (ethtool 6.7 netlink/fec.c): a Spark in its normal state configures "Auto"
// (samples/ethtool-fec/spark-fb97-*) and runs RS on a cabled port. Statistics only with -I, and only when FEC is
// active; mlx5 in RS mode gives totals only (no per-lane lines, docs/formats.md §2).
export function formatEthtoolFec(iface: string, v: { cabled: boolean; port: PortCounters; stats: boolean }): string {
  const head = `FEC parameters for ${iface}:\nSupported/Configured FEC encodings: Auto\n`;
  if (!v.cabled) return `${head}Active FEC encoding: None\n`;
  if (!v.stats) return `${head}Active FEC encoding: RS\n`;
  return (
    `${head}Active FEC encoding: RS\nStatistics:\n` +
    `  corrected_blocks: ${v.port.correctedBlocks}\n` +
    `  uncorrectable_blocks: ${v.port.uncorrectable}\n` +
    `  corrected_bits: ${v.port.correctedBits}\n`
  );
}
