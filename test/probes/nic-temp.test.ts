import { describe, expect, it } from 'vitest';
import { parseHwmon, parseMgetTemp } from '../../src/probes/nic-temp.js';
import { sample } from '../helpers/samples.js';
import { fuzzParser } from '../helpers/fuzz.js';
import { parseErrorOf } from '../helpers/parse-error.js';

const parseError = parseErrorOf;

// The v1-patch mail quotes the grep output with ">>> " between reviewer comments: keep the sysfs lines only.
const sysfsQuote = () =>
  sample('other/mlx5-hwmon-sysfs-v1-patch-review-quoted.txt')
    .split('\n')
    .filter((l) => l.startsWith('>>> /sys/'))
    .map((l) => l.slice(4))
    .join('\n');
// Generated, not recorded: the harness grep in the documented layout for a Spark with two mlx5 functions
// and an unrelated nvme sensor; hwmon10 sorts after hwmon3 numerically.
const GENERATED_SPARK =
  '/sys/class/hwmon/hwmon1/name:nvme\n' +
  '/sys/class/hwmon/hwmon10/name:mlx5\n' +
  '/sys/class/hwmon/hwmon3/name:mlx5\n' +
  '/sys/class/hwmon/hwmon1/temp1_label:Composite\n' +
  '/sys/class/hwmon/hwmon10/temp1_label:asic\n' +
  '/sys/class/hwmon/hwmon3/temp1_label:asic\n' +
  '/sys/class/hwmon/hwmon1/temp1_input:91850\n' +
  '/sys/class/hwmon/hwmon10/temp1_input:81000\n' +
  '/sys/class/hwmon/hwmon3/temp1_input:53000\n';

describe('parseHwmon', () => {
  it('reads the sysfs lines quoted from the mlx5 hwmon v1 patch (68 C, crit 105 C, label sensor0)', () => {
    const r = parseHwmon(sysfsQuote());
    expect(r.devices).toEqual([{ hwmon: 'hwmon0', name: '0000:08:00.0', sensors: [{ index: 1, label: 'sensor0', celsius: 68, critC: 105, highestC: 68 }] }]);
    // v1 named the device by PCI address; only the merged driver's name "mlx5" counts as the NIC.
    expect(r.nicMaxC).toBeNull();
    const merged = parseHwmon(sysfsQuote().replace('name:0000:08:00.0', 'name:mlx5'));
    expect(merged.nicMaxC).toBe(68);
  });

  it('groups by device, sorts hwmonN numerically and takes the hottest mlx5 reading only', () => {
    const r = parseHwmon(GENERATED_SPARK);
    expect(r.devices.map((d) => [d.hwmon, d.name, d.sensors[0]!.label, d.sensors[0]!.celsius])).toEqual([
      ['hwmon1', 'nvme', 'Composite', 91.85],
      ['hwmon3', 'mlx5', 'asic', 53],
      ['hwmon10', 'mlx5', 'asic', 81],
    ]);
    expect(r.nicMaxC).toBe(81);
  });

  it('keeps a labelled channel whose input was unreadable as null, not zero', () => {
    const r = parseHwmon('/sys/class/hwmon/hwmon3/name:mlx5\n/sys/class/hwmon/hwmon3/temp2_label:Module0\n');
    expect(r.devices[0]!.sensors).toEqual([{ index: 2, label: 'Module0', celsius: null }]);
    expect(r.nicMaxC).toBeNull();
  });

  it('rejects lines that are not sysfs reads, bad values and devices without a name', () => {
    expect(parseError(() => parseHwmon(GENERATED_SPARK + 'grep: /sys/class/hwmon/hwmon3/temp1_input: No data\n')).line).toBe(10);
    expect(parseError(() => parseHwmon(GENERATED_SPARK.replace('input:53000', 'input:53.5'))).reason).toMatch(/millidegrees/);
    expect(parseError(() => parseHwmon('/sys/class/hwmon/hwmon3/temp1_input:53000\n')).reason).toBe('hwmon3 has readings but no name line');
    expect(parseHwmon('').devices).toEqual([]);
  });
});

describe('parseMgetTemp', () => {
  // Documented (mstflint mget_temp.c), not recorded: printf("%-15d\n") and the two message forms.
  it('reads the padded integer', () => {
    expect(parseMgetTemp('53             \n')).toEqual({ celsius: 53 });
  });

  it('turns -I- and -E- messages into the reason', () => {
    const info = '-I- No valid temperature were measured. please check device configuration.';
    expect(parseError(() => parseMgetTemp(info + '\n')).reason).toBe(info);
    expect(parseError(() => parseMgetTemp('-E- Device not supported.\n')).reason).toBe('-E- Device not supported.');
    expect(parseError(() => parseMgetTemp('53 C\n')).reason).toMatch(/not an integer/);
    expect(parseError(() => parseMgetTemp('53\n54\n')).line).toBe(2);
  });
});

describe('nic-temp robustness', () => {
  it('only ever throws ParseError on random and mutated input', () => {
    fuzzParser(parseHwmon, [sysfsQuote(), GENERATED_SPARK]);
    fuzzParser(parseMgetTemp, ['53             \n', '-I- No valid temperature were measured. please check device configuration.\n']);
  });
});
