// The class of a cable as its EEPROM advertises it (lane class, not how it trained): QSFP28 25G lanes (100G class),
// QSFP56 50G PAM4 lanes (200G class), QSFP112 100G PAM4 lanes (400G class). A QSFP112 may train 2 x 100G or 4 x 50G.
export type CableFamily = 'QSFP28' | 'QSFP56' | 'QSFP112' | 'unknown';

// Management interface of the module EEPROM.
export type EepromStandard = 'SFF-8636' | 'CMIS';

// Identity of a cable as its EEPROM states it (decoded text or raw bytes); `anomalies` say where it lies.
export interface CableIdentity {
  standard: EepromStandard;
  identifier: number; // SFF-8024 identifier byte, e.g. 0x11 QSFP28, 0x18 QSFP-DD, 0x1e QSFP+ CMIS
  identifierText?: string;
  vendorName: string;
  vendorOui: string; // "xx:xx:xx"
  vendorPn: string;
  vendorRev: string;
  vendorSn: string;
  dateCode: string;
  lengthM: number | null;
  // Copper attenuation in dB keyed by frequency label ("2.5GHz", "5.0GHz", "7.0GHz", "12.9GHz", "25.8GHz").
  attenuationDb: Record<string, number>;
  transmitterTechnology?: string;
  anomalies: string[];
}

// Result of checking the EEPROM checksums from raw bytes.
export interface EepromChecksums {
  // SFF-8636: ccBase over 128..190 (stored at 191), ccExt over 192..222 (stored at 223). CMIS: page00 over 128..221 (stored at 222).
  [name: string]: { stored: number; computed: number; ok: boolean };
}
