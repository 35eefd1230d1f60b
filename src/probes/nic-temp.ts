import { ParseError } from '../domain/errors.js';

// One temperature channel of a hwmon device; celsius is null when the label was readable but the input was not.
export interface HwmonSensor {
  index: number;
  label: string | null;
  celsius: number | null;
  critC?: number;
  highestC?: number;
}

// One /sys/class/hwmon/hwmonN device (mlx5 registers one per PCI function, up to 4 on a Spark).
export interface HwmonDevice {
  hwmon: string;
  name: string;
  sensors: HwmonSensor[];
}

// Every hwmon device the grep printed, plus the hottest mlx5 reading (null when no mlx5 device reported one).
export interface HwmonResult {
  devices: HwmonDevice[];
  nicMaxC: number | null;
}

const SYSFS_LINE = /^\/sys\/class\/hwmon\/(hwmon\d+)\/([A-Za-z0-9_]+):(.*)$/;
const TEMP_ATTR = /^temp(\d+)_(input|label|crit|highest)$/;
const MILLI = /^-?\d+$/;

// Parse `grep -H . /sys/class/hwmon/hwmon*/{name,temp*_label,temp*_input}` (tempN_crit/highest read too if present).
export function parseHwmon(text: string): HwmonResult {
  const names = new Map<string, string>();
  const firstLine = new Map<string, number>();
  const sensors = new Map<string, Map<number, HwmonSensor>>();
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!.replace(/\r$/, '');
    if (line.trim() === '') continue;
    const m = SYSFS_LINE.exec(line);
    if (!m) throw new ParseError('hwmon', n, `not a "/sys/class/hwmon/hwmonN/<attr>:<value>" line: "${line.slice(0, 80)}"`);
    const [, hwmon, attr, value] = m as unknown as [string, string, string, string];
    if (!firstLine.has(hwmon)) firstLine.set(hwmon, n);
    if (attr === 'name') {
      if (names.has(hwmon)) throw new ParseError('hwmon', n, `${hwmon} has two name lines`);
      names.set(hwmon, value.trim());
      continue;
    }
    const t = TEMP_ATTR.exec(attr);
    if (!t) continue; // other attributes (fans, voltages, uevent) carry no NIC temperature
    const index = Number(t[1]);
    const byIndex = sensors.get(hwmon) ?? new Map<number, HwmonSensor>();
    sensors.set(hwmon, byIndex);
    const sensor = byIndex.get(index) ?? { index, label: null, celsius: null };
    byIndex.set(index, sensor);
    if (t[2] === 'label') {
      sensor.label = value.trim();
      continue;
    }
    const v = value.trim();
    if (!MILLI.test(v)) throw new ParseError('hwmon', n, `${attr} must be an integer in millidegrees C, got "${v.slice(0, 40)}"`);
    const c = Number(v) / 1000;
    if (t[2] === 'input') sensor.celsius = c;
    else if (t[2] === 'crit') sensor.critC = c;
    else sensor.highestC = c;
  }

  const devices: HwmonDevice[] = [...firstLine.keys()]
    .sort((a, b) => Number(a.slice(5)) - Number(b.slice(5)))
    .map((hwmon) => {
      const name = names.get(hwmon);
      if (name === undefined) throw new ParseError('hwmon', firstLine.get(hwmon)!, `${hwmon} has readings but no name line`);
      const list = [...(sensors.get(hwmon)?.values() ?? [])].sort((a, b) => a.index - b.index);
      return { hwmon, name, sensors: list };
    });
  const mlx5 = devices
    .filter((d) => d.name === 'mlx5')
    .flatMap((d) => d.sensors.map((s) => s.celsius))
    .filter((c): c is number => c !== null);
  return { devices, nicMaxC: mlx5.length ? Math.max(...mlx5) : null };
}

// mget_temp prints one integer (max over ASIC diodes and, on newer mstflint, module sensors).
export interface MgetTempResult {
  celsius: number;
}

// Parse non-verbose `mget_temp -d <dev>`: `printf("%-15d\n")`, or an -I-/-E- message that becomes the reason.
export function parseMgetTemp(text: string): MgetTempResult {
  const lines = text.split('\n').map((l) => l.replace(/\r$/, ''));
  const content = lines.map((l, k) => ({ n: k + 1, l })).filter(({ l }) => l.trim() !== '');
  const first = content[0];
  if (!first) throw new ParseError('mget-temp', 1, 'no output');
  const msg = content.find(({ l }) => /^-[IEW]- /.test(l.trim()));
  if (msg) throw new ParseError('mget-temp', msg.n, msg.l.trim().slice(0, 160));
  if (content.length !== 1) throw new ParseError('mget-temp', content[1]!.n, 'expected one line (non-verbose mget_temp)');
  const m = /^\s*(-?\d+)\s*$/.exec(first.l);
  if (!m) throw new ParseError('mget-temp', first.n, `not an integer temperature: "${first.l.trim().slice(0, 40)}"`);
  return { celsius: Number(m[1]) };
}
