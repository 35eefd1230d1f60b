import type { CableIdentity, EepromChecksums } from '../domain/cable.js';

// Identity decoded from raw EEPROM bytes: the CableIdentity keys plus what only the bytes can tell.
export interface EepromDecode extends CableIdentity {
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
