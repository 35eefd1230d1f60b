// Every CSV column with its meaning; the docs are generated from this, and writers use it for header order.
// unit, phase and receiver: what a figure column measures in, over which phase(s) and at which receiver(s) (absent: the
// column is not a measurement). docs/outputs.md's column dictionary is this table (test/report/outputs-doc.test.ts).
export interface CsvColumn {
  name: string;
  description: string;
  unit?: string;
  phase?: string;
  receiver?: string;
}

const col = (name: string, description: string, m: Pick<CsvColumn, 'unit' | 'phase' | 'receiver'> = {}): CsvColumn => ({ name, description, ...m });
const SOAKS = 'graded soaks';
const EVERY = 'every phase';
const WORST = 'worst receiver';

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
  col('length_m_eeprom', 'cable length the EEPROM claims, metres (SFF-8636 stores whole metres)', { unit: 'm' }),
  col('ib_write_bw_gbps', 'ib_write_bw benchmark phase, the weaker direction: sum over both rails of the per-rail median, Gb/s (gigabits)', {
    unit: 'Gb/s',
    phase: 'ib-write-bw',
    receiver: 'the weaker direction',
  }),
  col('nccl_busbw_gbs', 'NCCL benchmark phase, all_reduce average bus bandwidth, GB/s (gigabytes: NCCL reports bytes)', {
    unit: 'GB/s',
    phase: 'nccl',
    receiver: 'both ranks',
  }),
  col('pre_fec_ber_idle', 'pre-FEC BER (point estimate) over the graded soak before the headline soak (soak-idle), worst receiver', {
    unit: 'BER',
    phase: 'the soak before the headline soak',
    receiver: WORST,
  }),
  col('pre_fec_ber_loaded', 'pre-FEC BER (point estimate) over the headline soak (the GPU-loaded soak-loaded), worst receiver', {
    unit: 'BER',
    phase: 'the headline soak',
    receiver: WORST,
  }),
  col('pre_fec_ber_loaded_ub95', '95% upper bound of the headline soak pre-FEC BER, worst receiver', {
    unit: 'BER',
    phase: 'the headline soak',
    receiver: WORST,
  }),
  col('fec_margin_decades', '"FEC margin": log10(2.4e-4 / the worst lane pre-FEC BER 95% upper bound) over the graded soaks, any receiver, decades', {
    unit: 'decades',
    phase: SOAKS,
    receiver: WORST,
  }),
  col('max_lane_ratio', 'lane ratio over the graded soaks: worst lane against the median of the others (x), worst receiver', {
    unit: 'x',
    phase: SOAKS,
    receiver: WORST,
  }),
  col('crc_errors', 'CRC errors, both receivers, every phase (as the crc-errors rule counts them)', { unit: 'errors', phase: EVERY, receiver: 'both, summed' }),
  col('post_fec_errors', 'post-FEC (uncorrectable) errors, both receivers, every phase (as the post-fec-errors rule counts them)', {
    unit: 'errors',
    phase: EVERY,
    receiver: 'both, summed',
  }),
  col('link_down_events', 'link-down events, both receivers, every phase (as the link-down-events rule counts them)', {
    unit: 'events',
    phase: EVERY,
    receiver: 'both, summed',
  }),
  col(
    'phy_recoveries',
    'successful PHY recoveries without a link drop (total_success_recovery_phy), both receivers, every phase; empty where no kernel exposed it',
    { unit: 'recoveries', phase: EVERY, receiver: 'both, summed' },
  ),
  col('nic_temp_max_c', 'hottest NIC temperature read over the graded soaks, either receiver, degrees C', { unit: '°C', phase: SOAKS, receiver: 'the hotter' }),
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
  col('fec_margin_node', 'the receiver (node) where the FEC margin was measured'),
  col('fec_margin_phase', 'the soak where the FEC margin was measured'),
  col('fec_margin_lane', 'the lane where the FEC margin was measured (empty: corrected bits of all lanes)'),
  col('loaded_fec_margin_decades', '"loaded-soak FEC margin": the FEC margin over the headline soak only (the certificate headline table), decades', {
    unit: 'decades',
    phase: 'the headline soak',
    receiver: WORST,
  }),
  col('worst_lane_ber_ub95', '"worst-lane BER": the worst lane pre-FEC BER 95% upper bound over the graded soaks, any receiver', {
    unit: 'BER',
    phase: SOAKS,
    receiver: WORST,
  }),
  col('qualifies', 'true when this run counts as a qualified cable: judged (PASS, MARGINAL, FAIL), a qualification, not the golden reference'),
  col('role', 'cable, or golden (the batch reference cable run first and last to check the bench)'),
  col('deciding_rule', 'the rule of the reason that decided a FAIL or MARGINAL (or why an ERROR could not judge); empty for a PASS'),
  col('deciding_value', 'that reason value, in deciding_unit (a FAIL on a window: the window FEC margin, not fec_margin_decades)', { unit: 'deciding_unit' }),
  col('deciding_unit', 'the unit of deciding_value (decades, x, Gb/s, ...)'),
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
    col('seconds_s', 'seconds of the phase analysed', { unit: 's', phase: 'the row phase', receiver: 'the row node' }),
    col('errors', 'pre-FEC raw errors counted (rx_err_lane_N_phy delta)', { unit: 'errors', phase: 'the row phase', receiver: 'the row node' }),
    col('rate_per_s', 'errors per second', { unit: 'errors/s', phase: 'the row phase', receiver: 'the row node' }),
    col('ber', 'errors / (seconds x 53.125e9 bit/s lane rate)', { unit: 'BER', phase: 'the row phase', receiver: 'the row node' }),
    col('ber_ub95', '95% upper confidence bound of the BER (Poisson); > 0 even with no errors', {
      unit: 'BER',
      phase: 'the row phase',
      receiver: 'the row node',
    }),
  ],
  'timeseries.csv': [
    col('t_s', 'seconds since the run started'),
    SIMULATED,
    col('node', 'receiving node'),
    col('phase', 'protocol phase at that moment'),
    col('lane_N_errors_per_s', 'one column per lane N: pre-FEC errors per second over the last interval (empty: a lane the cable does not have, or not read)', {
      unit: 'errors/s',
      phase: 'the row phase',
      receiver: 'the row node',
    }),
    col('nic_temp_c', 'NIC temperature, degrees C (empty if not read)', { unit: '°C', receiver: 'the row node' }),
    col('<reading id>', 'one column per registered extra reading (src/probes/readings.ts; its id ends with its unit, - as _), empty where not read that tick'),
  ],
  'throughput.csv': [
    col('run_id', 'run identifier'),
    col('t_s', 'seconds since the run started'),
    col('phase', 'the protocol phase under way at t_s (ib-write-bw, soak-idle, soak-loaded, ...)'),
    SIMULATED,
    col('rail', 'PCIe rail (0 or 1)'),
    col('gbps', 'throughput of that rail, Gb/s (gigabits)', { unit: 'Gb/s', phase: 'the row phase', receiver: 'the direction receiver' }),
    col('direction', 'sender->receiver of that stream (empty for runs before one stream per direction: their -b rows halved)'),
  ],
  'compare-by-part.csv': [
    col('part_number', 'EEPROM vendor part number (empty = unknown)'),
    col('vendor', 'EEPROM vendor name(s) seen with this part number, joined by "; "'),
    col('runs', 'runs read'),
    col('judged_runs', 'qualifications with a cable verdict (PASS, MARGINAL or FAIL); set-up checks and golden runs are not counted here'),
    col('pass', 'PASS qualifications'),
    col('marginal', 'MARGINAL qualifications'),
    col('fail', 'FAIL qualifications'),
    col('not_judged', 'ERROR or ABORTED runs'),
    col('pass_rate', 'pass / judged_runs (empty when none judged)'),
    col(
      'median_pre_fec_ber_loaded',
      'median over judged qualifications of pre_fec_ber_loaded_ub95 (the bound: a zero-error soak bounds, it does not measure 0)',
    ),
    col('worst_pre_fec_ber_loaded', 'highest pre_fec_ber_loaded_ub95 over judged qualifications'),
    col('setup_checks', 'set-up checks read (judged or not): shown apart, they qualify no cable'),
    col('golden_runs', 'golden reference runs read: shown apart, not cables of the part'),
  ],
} as const satisfies Record<string, CsvColumn[]>;
