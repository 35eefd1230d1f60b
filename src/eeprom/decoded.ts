import type { CableIdentity, EepromChecksums } from '../domain/cable.js';

// What a module tells beyond a cable's identity, from its decoded text or its bytes: an optic's fibre reach (SFF-8636
// byte 146 read as what it is on a pluggable optic) and its monitors (diagnostics), each only when the module has them.
export interface ModuleExtras {
  om4LinkLengthM?: number | null; // pluggable SFF-8636 optics: OM4 reach in metres (byte 146 x 2 m); lengthM is null
  diagnostics?: ModuleDiagnostics;
}

// Alarm and warning thresholds of one monitor, in its unit; a threshold the module did not print is null.
export interface MonitorThresholds {
  highAlarm: number | null;
  lowAlarm: number | null;
  highWarning: number | null;
  lowWarning: number | null;
}

// One optical lane's monitors (ethtool's "Channel N", counted from 1); a value the module did not print is null.
export interface LaneMonitors {
  lane: number;
  biasMa: number | null; // laser bias current
  txPowerMw: number | null; // transmit average optical power
  rxPowerMw: number | null; // receive power, average or OMA as rxPowerKind says
}

// A module's digital diagnostics: its temperature (a reading beside the NIC's on active cables and optics), supply
// voltage, per-lane bias and optical power, the thresholds the module itself declares, and the flags it raised.
// temperatureC and voltageV are null when the module reports none (ethtool prints 0.00 for passive copper).
export interface ModuleDiagnostics {
  temperatureC: number | null;
  voltageV: number | null;
  lanes: LaneMonitors[];
  rxPowerKind: 'average' | 'OMA' | null;
  alarmFlagsImplemented: boolean | null; // SFF-8636 "Alarm/warning flags implemented"; null when not printed
  thresholds: {
    temperatureC?: MonitorThresholds;
    voltageV?: MonitorThresholds;
    biasMa?: MonitorThresholds;
    txPowerMw?: MonitorThresholds;
    rxPowerMw?: MonitorThresholds;
  };
  raised: string[]; // alarm/warning flags that are On, as ethtool names them, e.g. "Module temperature high warning"
}

// Identity decoded from raw EEPROM bytes: the CableIdentity keys plus what only the bytes can tell.
export interface EepromDecode extends CableIdentity, ModuleExtras {
  checksums: EepromChecksums;
  bytesRead: number;
  revisionCompliance: number | null; // byte 1 (SFF-8636 code, CMIS major.minor nibbles)
  connector: number | null;
  transmitterCode: number | null; // 4-bit media technology code (0xa = copper, unequalized)
  extendedCompliance: { code: number; text: string } | null; // SFF-8636 byte 192 when byte 131 bit 7 is set
  nominalRateGBd: number | null; // SFF-8636 byte 140 (x0.1 GBd) or byte 222 (x0.25 GBd) when byte 140 = 0xff
  encoding?: number | null; // SFF-8636 byte 139 (0x08 PAM4)
  mediaType?: number | null; // CMIS byte 85 (0x03 passive copper)
  applications?: CmisApplication[]; // CMIS application descriptors (bytes 86-117), when the lower page was read
}

// One CMIS application descriptor (CMIS 5.2 table 8-23): what the module can run, host side and media side.
export interface CmisApplication {
  hostInterface: number; // SFF-8024 table 4-5 code, e.g. 0x48 400GBASE-CR4 (Clause 162)
  mediaInterface: number;
  hostLanes: number;
  mediaLanes: number;
}
