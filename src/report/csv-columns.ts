// Every CSV column with its meaning; the docs are generated from this, and writers use it for header order.
export interface CsvColumn {
  name: string;
  description: string;
}

const col = (name: string, description: string): CsvColumn => ({ name, description });

// Every file of a run says on every row whether real hardware was measured.
const SIMULATED = col('simulated', 'true when no real hardware was measured (the simulated lab, or nodes that said they are it)');

// One row per run: summary.csv (one run) and compare.csv (many runs) share these columns.
const RUN_ROW: CsvColumn[] = [
  col('run_id', 'run identifier (directory name under reports/<label>/)'),
  col('started_at', 'ISO 8601 UTC start time'),
  col('label', 'operator label of the cable (empty if none)'),
  SIMULATED,
  col('vendor', 'EEPROM vendor name'),
  col('part_number', 'EEPROM vendor part number'),
  col('serial', 'EEPROM vendor serial number'),
  col('family', 'cable class the EEPROM advertises: QSFP28 (25G lanes), QSFP56 (50G PAM4 lanes), QSFP112 (100G PAM4 lanes) or unknown'),
  col('lanes', 'lanes in use as trained (ethtool)'),
  col('trained_mode', 'how the link trained: lanes x rate per lane from ethtool Lanes and Speed, e.g. 4 x 50G'),
  col('length_m_eeprom', 'cable length the EEPROM claims, metres (SFF-8636 stores whole metres)'),
  col('ib_write_bw_gbps', 'ib_write_bw, sum over both rails of the per-rail median, Gb/s'),
  col('nccl_busbw_gbs', 'NCCL all_reduce average bus bandwidth, GB/s'),
  col('pre_fec_ber_idle', 'pre-FEC BER in soak-idle, worst receiver'),
  col('pre_fec_ber_loaded', 'pre-FEC BER in soak-loaded, worst receiver'),
  col('pre_fec_ber_loaded_ub95', '95% upper bound of the soak-loaded pre-FEC BER, worst receiver'),
  col('fec_margin_decades', 'log10(2.4e-4 / worst pre-FEC BER upper bound), decades'),
  col('max_lane_ratio', 'worst lane error rate / median of the other lanes (x)'),
  col('crc_errors', 'CRC errors, all receivers and phases'),
  col('post_fec_errors', 'post-FEC (uncorrectable) errors, all receivers and phases'),
  col('link_down_events', 'link-down events, all receivers and phases'),
  col('nic_temp_max_c', 'highest NIC temperature seen, degrees C'),
  col('nodes', 'the two nodes; the node columns below list their values in this order, joined by " / " (empty: unknown)'),
  col('product_name', 'machine (DMI product_name) per node'),
  col('bios_version', 'BIOS version (DMI bios_version) per node'),
  col('os_release', 'DGX OS release (/etc/dgx-release), else the Ubuntu release (/etc/os-release), per node'),
  col('kernel', 'kernel release (uname -r) per node'),
  col('nic_driver', 'NIC driver and its version (ethtool -i) per node'),
  col('nic_firmware', 'NIC firmware version (ethtool -i) per node'),
  col('perftest_version', 'perftest version (ib_write_bw --version) per node'),
  col('gpu_driver_version', 'NVIDIA GPU driver version (nvidia-smi) per node'),
  col('cuda_version', 'highest CUDA version the GPU driver supports (nvidia-smi "CUDA Version") per node'),
  col('openmpi_version', 'Open MPI version (mpirun --version) per node, read when the protocol runs NCCL'),
  col('nccl_version', "NCCL version each node's rank loaded, from the NCCL run (runs before per-rank versions: the first node only)"),
  col('nccl_tests_version', 'nccl-tests version from the NCCL run (rank 0: the first node)'),
  col('outcome', 'PASS, MARGINAL, FAIL (cable verdicts) or ERROR, ABORTED (run could not judge)'),
  col(
    'run_kind',
    'qualification, or setup-check (a protocol short of the burn-in: its verdict qualifies no cable); empty for records before they were told apart',
  ),
  col('reasons', 'reasons for the outcome, "rule: message" joined by "; "'),
];

// CSV files and their columns, keyed by file name. compare-by-part.csv sits beside the compare output.
export const CSV_COLUMNS = {
  'summary.csv': RUN_ROW,
  'compare.csv': RUN_ROW,
  'lanes.csv': [
    col('run_id', 'run identifier'),
    SIMULATED,
    col('node', 'receiving node'),
    col('phase', 'protocol phase (soak-idle, soak-loaded, ...)'),
    col('lane', 'lane index 0..lanes-1'),
    col('seconds_s', 'seconds of the phase analysed'),
    col('errors', 'pre-FEC raw errors counted (rx_err_lane_N_phy delta)'),
    col('rate_per_s', 'errors per second'),
    col('ber', 'errors / (seconds x 53.125e9 bit/s lane rate)'),
    col('ber_ub95', '95% upper confidence bound of the BER (Poisson); > 0 even with no errors'),
  ],
  'timeseries.csv': [
    col('t_s', 'seconds since the run started'),
    SIMULATED,
    col('node', 'receiving node'),
    col('phase', 'protocol phase at that moment'),
    col('lane_N_errors_per_s', 'one column per lane N: pre-FEC errors per second over the last interval'),
    col('nic_temp_c', 'NIC temperature, degrees C (empty if not read)'),
    col('<reading id>', 'one column per registered extra reading (src/probes/readings.ts; its id ends with its unit, - as _), empty where not read that tick'),
  ],
  'throughput.csv': [
    col('t_s', 'seconds since the run started'),
    SIMULATED,
    col('rail', 'PCIe rail (0 or 1)'),
    col('gbps', 'throughput of that rail, Gb/s'),
    col('direction', 'sender->receiver of that stream (empty for runs before one stream per direction: their -b rows halved)'),
  ],
  'compare-by-part.csv': [
    col('part_number', 'EEPROM vendor part number (empty = unknown)'),
    col('vendor', 'EEPROM vendor name(s) seen with this part number, joined by "; "'),
    col('runs', 'runs read'),
    col('judged_runs', 'runs with a cable verdict (PASS, MARGINAL or FAIL)'),
    col('pass', 'PASS runs'),
    col('marginal', 'MARGINAL runs'),
    col('fail', 'FAIL runs'),
    col('not_judged', 'ERROR or ABORTED runs'),
    col('pass_rate', 'pass / judged_runs (empty when none judged)'),
    col('median_pre_fec_ber_loaded', 'median over judged runs of pre_fec_ber_loaded'),
    col('worst_pre_fec_ber_loaded', 'highest pre_fec_ber_loaded over judged runs'),
  ],
} as const satisfies Record<string, CsvColumn[]>;
