// GENERATED command outputs for the sampler tests, shaped like the samples/ethtool-stats and samples/ethtool-fec files (not recorded).

export const genStats = (lanes: number[], correctedBits: number, extra = '') =>
  'NIC statistics:\n' +
  '     rx_packets_phy: 123456789\n' +
  lanes.map((v, i) => `     rx_err_lane_${i}_phy: ${v}\n`).join('') +
  `     rx_corrected_bits_phy: ${correctedBits}\n` +
  '     rx_crc_errors_phy: 0\n' +
  '     link_down_events_phy: 1\n' +
  extra;

export const genLink = (iface: string, up: boolean) =>
  `Settings for ${iface}:\n` +
  '\tSupported ports: [ FIBRE ]\n' +
  '\tSpeed: 200000Mb/s\n' +
  '\tLanes: 4\n' +
  '\tDuplex: Full\n' +
  '\tAuto-negotiation: on\n' +
  '\tPort: Direct Attach Copper\n' +
  `\tLink detected: ${up ? 'yes' : 'no'}\n`;

export const genFec = (iface: string) =>
  `FEC parameters for ${iface}:\n` +
  'Supported/Configured FEC encodings: Auto\n' +
  'Active FEC encoding: RS\n' +
  'Statistics:\n' +
  '  corrected_blocks: 12\n' +
  '  uncorrectable_blocks: 0\n' +
  '  corrected_bits: 34\n';

export const genHwmon = (asicMilliC: number) =>
  '/sys/class/hwmon/hwmon0/name:acpitz\n' +
  '/sys/class/hwmon/hwmon3/name:mlx5\n' +
  '/sys/class/hwmon/hwmon3/temp1_label:asic\n' +
  '/sys/class/hwmon/hwmon0/temp1_input:45000\n' +
  `/sys/class/hwmon/hwmon3/temp1_input:${asicMilliC}\n`;

export const genGpu = (util: number, tempC: number, powerW: string) => `0, NVIDIA GB10, ${util}, ${tempC}, ${powerW}\n`;
