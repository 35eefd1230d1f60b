// The digital diagnostics lines of `ethtool -m` (SFF-8636 and CMIS modules with monitors: optics, active cables):
// module temperature and voltage, per-lane bias and optical power, the module's alarm and warning thresholds and its
// flags. Labels and units as ethtool prints them (sff-common.h PRINT_TEMP/PRINT_VCC/PRINT_BIAS/PRINT_xX_PWR, qsfp.c
// and cmis.c; docs/formats.md §4d), in both the padded labels of ethtool <= 6.11 ("Laser bias current high alarm
// (Chan 1)", "Rcvr signal avg optical power(Channel 1)") and the later ones.
import { ParseError } from '../domain/errors.js';
import type { LaneMonitors, ModuleDiagnostics, MonitorThresholds } from '../eeprom/decoded.js';
import { clip } from './read.js';

const KIND = 'ethtool-module';

// One `label : value` line of the decoded text.
export interface ModuleLine {
  label: string;
  value: string;
  line: number;
}

const NUMBER = '(-?\\d+(?:\\.\\d+)?)';
const UNIT: Record<'temperatureC' | 'voltageV' | 'biasMa' | 'powerMw', { re: RegExp; says: string }> = {
  temperatureC: { re: new RegExp(`^${NUMBER} degrees C(?: / -?\\d+(?:\\.\\d+)? degrees F)?$`), says: '"<n> degrees C / <n> degrees F"' },
  voltageV: { re: new RegExp(`^${NUMBER} V$`), says: '"<n> V"' },
  biasMa: { re: new RegExp(`^${NUMBER} mA$`), says: '"<n> mA"' },
  powerMw: { re: new RegExp(`^${NUMBER} mW / (?:-?\\d+(?:\\.\\d+)?|-inf) dBm$`), says: '"<n> mW / <n> dBm"' },
};
type Unit = keyof typeof UNIT;

const CHANNEL = '\\((?:Channel|Chan) (\\d+)\\)';
const LANE_VALUE: [RegExp, keyof Omit<LaneMonitors, 'lane'>, Unit][] = [
  [new RegExp(`^Laser tx bias current ${CHANNEL}$`), 'biasMa', 'biasMa'],
  [new RegExp(`^Transmit avg optical power ${CHANNEL}$`), 'txPowerMw', 'powerMw'],
  [new RegExp(`^(?:Rcvr signal avg optical power|Receiver signal OMA) ${CHANNEL}$`), 'rxPowerMw', 'powerMw'],
];
const MONITOR: Record<string, [keyof ModuleDiagnostics['thresholds'], Unit]> = {
  'Module temperature': ['temperatureC', 'temperatureC'],
  'Module voltage': ['voltageV', 'voltageV'],
  'Laser bias current': ['biasMa', 'biasMa'],
  'Laser output power': ['txPowerMw', 'powerMw'],
  'Laser rx power': ['rxPowerMw', 'powerMw'],
};
const THRESHOLD = /^(Module temperature|Module voltage|Laser bias current|Laser output power|Laser rx power) (high|low) (alarm|warning) threshold$/;
const FLAG = new RegExp(
  `^(?:Module temperature|Module voltage|Laser bias current|Laser tx power|Laser rx power) (?:high|low) (?:alarm|warning)(?: ${CHANNEL})?$`,
);
const THRESHOLD_KEY = { 'high alarm': 'highAlarm', 'low alarm': 'lowAlarm', 'high warning': 'highWarning', 'low warning': 'lowWarning' } as const;

// ethtool pads some labels ("high alarm   (Chan 1)") and drops the space in others ("power(Channel 1)"): one spelling.
export function normalLabel(label: string): string {
  return label.replace(/\s+/g, ' ').replace(/(\S)\(/g, '$1 (');
}

function reading(l: ModuleLine, unit: Unit): number {
  const m = UNIT[unit].re.exec(l.value);
  if (!m) throw new ParseError(KIND, l.line, `${l.label} ${clip(l.value)} is not ${UNIT[unit].says}`);
  return Number(m[1]);
}

function onOff(l: ModuleLine, yes: string, no: string): boolean {
  if (l.value !== yes && l.value !== no) throw new ParseError(KIND, l.line, `${l.label} ${clip(l.value)} is not ${yes} or ${no}`);
  return l.value === yes;
}

// Read the diagnostics lines among a module's `label : value` lines (labels already normalised); undefined when they
// say nothing: no monitor line, or only the 0.00 degrees C and 0.0000 V ethtool prints for a module without monitors.
export function readDiagnostics(lines: ModuleLine[]): ModuleDiagnostics | undefined {
  const d: ModuleDiagnostics = { temperatureC: null, voltageV: null, lanes: [], rxPowerKind: null, alarmFlagsImplemented: null, thresholds: {}, raised: [] };
  const lane = (n: number): LaneMonitors => {
    let l = d.lanes.find((x) => x.lane === n);
    if (!l) d.lanes.push((l = { lane: n, biasMa: null, txPowerMw: null, rxPowerMw: null }));
    return l;
  };
  for (const l of lines) {
    if (l.label === 'Module temperature' || l.label === 'Module voltage') {
      const v = reading(l, l.label === 'Module temperature' ? 'temperatureC' : 'voltageV');
      // ethtool prints a module without monitors (a passive DAC) as 0.00 degrees C and 0.0000 V: no reading.
      if (v !== 0) d[l.label === 'Module temperature' ? 'temperatureC' : 'voltageV'] = v;
      continue;
    }
    if (l.label === 'Alarm/warning flags implemented') {
      d.alarmFlagsImplemented = onOff(l, 'Yes', 'No');
      continue;
    }
    const laneValue = LANE_VALUE.find(([re]) => re.test(l.label));
    if (laneValue) {
      const [re, key, unit] = laneValue;
      lane(Number(re.exec(l.label)![1]))[key] = reading(l, unit);
      if (key === 'rxPowerMw') d.rxPowerKind = l.label.startsWith('Receiver signal OMA') ? 'OMA' : 'average';
      continue;
    }
    const t = THRESHOLD.exec(l.label);
    if (t) {
      const [key, unit] = MONITOR[t[1]!]!;
      const th: MonitorThresholds = (d.thresholds[key] ??= { highAlarm: null, lowAlarm: null, highWarning: null, lowWarning: null });
      th[THRESHOLD_KEY[`${t[2]} ${t[3]}` as keyof typeof THRESHOLD_KEY]] = reading(l, unit);
      continue;
    }
    if (FLAG.test(l.label) && onOff(l, 'On', 'Off')) d.raised.push(l.label);
  }
  d.lanes.sort((a, b) => a.lane - b.lane);
  const said = d.temperatureC !== null || d.voltageV !== null || d.lanes.length > 0 || Object.keys(d.thresholds).length > 0 || d.alarmFlagsImplemented !== null;
  return said || d.raised.length > 0 ? d : undefined;
}
