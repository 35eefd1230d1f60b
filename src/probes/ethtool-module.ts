import type { CableIdentity, EepromStandard } from '../domain/cable.js';
import { ParseError } from '../domain/errors.js';
import { NO_SEPARABLE_CONNECTOR, dropPlaceholderAttenuation, lengthResolutionNote, om4ReachOfByte146 } from '../eeprom/anomalies.js';
import { IDENTIFIER_NAMES, TRANSMITTER_TECHNOLOGY, hex2, isCopperTechnology, partNumberSaysHalfMetre } from '../eeprom/bytes.js';
import { decodeEeprom, standardOf } from '../eeprom/decode.js';
import type { EepromDecode, ModuleExtras } from '../eeprom/decoded.js';
import { assertNotFailedRead, readHexDump } from '../eeprom/hex-rows.js';
import { normalLabel, readDiagnostics } from './module-diagnostics.js';

const KIND = 'ethtool-module';

// Which ethtool printed the text: label sets changed in 6.14 (module-info JSON rework).
export type ModuleLabelStyle = 'ethtool<=6.11' | 'ethtool>=6.14' | 'unknown';

// Identity as the decoded text states it, plus what the text reveals about the ethtool that printed it, an optic's
// fibre reach and the module's diagnostics (when it has monitors).
export interface ModuleText extends CableIdentity, ModuleExtras {
  labelStyle: ModuleLabelStyle;
  transceiverTypes: string[];
  revisionComplianceText: string | null; // as printed; the byte-1 code is EepromDecode.revisionCompliance
}

// Labels only one side of the 6.14 rework prints (CMIS shares `Length (SMF)` across versions, so it tells nothing there).
const NEW_LABELS: Record<EepromStandard, string[]> = {
  'SFF-8636': ['BR Nominal', 'Length (SMF)', 'Length (OM3)', 'Length (OM2)', 'Length (OM1)', 'Power set', 'Power override'],
  CMIS: ['Module state'],
};
const OLD_LABELS: Record<EepromStandard, string[]> = {
  'SFF-8636': ['BR, Nominal', 'Length (SMF,km)', 'Length (OM3 50um)', 'Length (OM2 50um)', 'Length (OM1 62.5um)'],
  CMIS: ['Module State'],
};
const VENDOR_LABELS = ['Vendor name', 'Vendor OUI', 'Vendor PN', 'Vendor rev', 'Vendor SN', 'Date code'] as const;
const LINE = /^\s*([^:\s][^:]*?)\s+:\s?(.*)$/;
const HEX_HEADER = /^\s*Offset\s+Values\s*$/;

interface Field {
  value: string;
  line: number;
}

// `sudo -n ethtool -m IF` decoded text (SFF-8636 or CMIS, either label set); a hex fallback dump is decoded from its bytes.
export function parseEthtoolModule(text: string): ModuleText | EepromDecode {
  assertNotFailedRead(text, KIND);
  const lines = text.split('\n');
  if (lines.some((l) => HEX_HEADER.test(l))) {
    const dump = readHexDump(text, KIND);
    return decodeEeprom(dump.bytes, dump.bytesRead, { kind: KIND });
  }
  const fields = new Map<string, Field[]>();
  lines.forEach((raw, i) => {
    if (raw.trim() === '') return;
    const m = LINE.exec(raw);
    if (!m) throw new ParseError(KIND, i + 1, `not a "label : value" line: ${JSON.stringify(raw.trim().slice(0, 60))}`);
    const list = fields.get(m[1]!) ?? [];
    list.push({ value: m[2]!.trimEnd(), line: i + 1 });
    fields.set(m[1]!, list);
  });
  const one = (label: string): Field | undefined => {
    const list = fields.get(label);
    if (!list) return undefined;
    const other = list.find((f) => f.value !== list[0]!.value);
    if (other) throw new ParseError(KIND, other.line, `"${label}" printed twice with different values`);
    return list[0];
  };
  const idField = one('Identifier');
  if (!idField) throw new ParseError(KIND, 1, 'no "Identifier" line: not `ethtool -m` output');
  const idm = /^0x([0-9a-fA-F]{2})\b\s*(?:\((.*)\))?/.exec(idField.value);
  if (!idm) throw new ParseError(KIND, idField.line, `Identifier "${idField.value}" does not start with a 0xNN code`);
  const identifier = parseInt(idm[1]!, 16);
  const standard = standardOf(identifier);
  if (!standard) {
    throw new ParseError(
      KIND,
      idField.line,
      `identifier ${hex2(identifier)} (${IDENTIFIER_NAMES[identifier] ?? idm[2] ?? 'unknown'}) is not a QSFP SFF-8636/CMIS module`,
    );
  }
  return fromFields(standard, identifier, idm[2], fields, one);
}

function fromFields(
  standard: EepromStandard,
  identifier: number,
  identifierText: string | undefined,
  fields: Map<string, Field[]>,
  one: (label: string) => Field | undefined,
): ModuleText {
  const anomalies: string[] = [];
  const has = (l: string): boolean => fields.has(l);
  const transceiverTypes = (fields.get('Transceiver type') ?? []).map((f) => f.value);
  const techField = one('Transmitter technology');
  let techCode: number | null = null;
  if (techField) {
    const m = /^0x([0-9a-fA-F]{2})\b/.exec(techField.value);
    if (!m) throw new ParseError(KIND, techField.line, `Transmitter technology "${techField.value}" does not start with a 0xNN code`);
    const byte = parseInt(m[1]!, 16);
    techCode = standard === 'SFF-8636' ? byte >> 4 : byte;
  }
  const attLines = [...fields.keys()].filter((l) => /^Attenuation at [\d.]+GHz$/.test(l));
  const copper = techCode !== null ? isCopperTechnology(techCode) : attLines.length > 0 || transceiverTypes.some((t) => /Base-CR|copper/i.test(t));

  let labelStyle: ModuleLabelStyle = 'unknown';
  const cmisLength = one('Cable assembly length')?.value ?? '';
  if (NEW_LABELS[standard].some(has) || (standard === 'SFF-8636' && /Copper cable, /.test(techField?.value ?? '')) || /^\d+\.\d{4}m$/.test(cmisLength)) {
    labelStyle = 'ethtool>=6.14';
  } else if (
    OLD_LABELS[standard].some(has) ||
    transceiverTypes.length > 1 ||
    /Copper cable unequalized/.test(techField?.value ?? '') ||
    /^\d+\.\d{2}m$/.test(cmisLength)
  ) {
    labelStyle = 'ethtool<=6.11';
  }

  const vendor = Object.fromEntries(VENDOR_LABELS.map((l) => [l, one(l)?.value ?? ''])) as Record<(typeof VENDOR_LABELS)[number], string>;
  const absent = VENDOR_LABELS.filter((l) => !has(l));
  if (absent.length) anomalies.push(`incomplete: no ${absent.map((l) => `"${l}"`).join(', ')} line in the output`);

  const attenuationDb: Record<string, number> = {};
  for (const label of attLines) {
    const f = one(label)!;
    const m = /^(\d+)\s*db$/i.exec(f.value);
    if (!m) throw new ParseError(KIND, f.line, `${label} "${f.value}" is not "<n>db"`);
    attenuationDb[`${parseFloat(label.slice('Attenuation at '.length)).toFixed(1)}GHz`] = Number(m[1]);
  }

  let lengthM: number | null = null;
  let om4: { om4LinkLengthM: number | null } | null = null;
  if (standard === 'SFF-8636') {
    const f = one('Length (Copper or Active cable)');
    if (f) {
      const m = /^(\d+)m$/.exec(f.value);
      if (!m) throw new ParseError(KIND, f.line, `cable length "${f.value}" is not "<n>m"`);
      lengthM = Number(m[1]) || null;
      // A pluggable optic (optical transmitter, separable connector): the byte is its OM4 reach, not a cable length.
      const connector = one('Connector')?.value ?? '';
      const code = /^0x([0-9a-fA-F]{2})\b/.exec(connector);
      if (lengthM !== null && techCode !== null && !copper && code && parseInt(code[1]!, 16) !== NO_SEPARABLE_CONNECTOR) {
        const reach = om4ReachOfByte146(lengthM, connector);
        om4 = { om4LinkLengthM: reach.om4LinkLengthM };
        anomalies.push(reach.note);
        lengthM = null;
      }
    }
    const a = attenuationDb;
    if (
      copper &&
      labelStyle !== 'ethtool<=6.11' &&
      a['7.0GHz'] !== undefined &&
      a['7.0GHz'] === a['2.5GHz'] &&
      a['12.9GHz'] === a['5.0GHz'] &&
      a['12.9GHz'] !== undefined
    ) {
      anomalies.push(
        `attenuation-ethtool-bug: 7.0/12.9 GHz lines repeat the 2.5/5.0 GHz values (${a['2.5GHz']}/${a['5.0GHz']} dB); ethtool >= 6.14 reads bytes 186/187 for them; dropped, read bytes 188/189 with hex on`,
      );
      delete a['7.0GHz'];
      delete a['12.9GHz'];
    }
    const om1 = one('Length (OM1 62.5um)') ?? one('Length (OM1)');
    const om1m = om1 ? /^(\d+)m$/.exec(om1.value) : null;
    if (copper && om1m && Number(om1m[1]) > 0 && a['25.8GHz'] === undefined) {
      a['25.8GHz'] = Number(om1m[1]);
      anomalies.push(`om1-is-attenuation: "Length (OM1)" ${om1m[1]}m on a copper cable is byte 145 = ${om1m[1]} dB at 25.78 GHz`);
    }
    const br = one('BR, Nominal') ?? one('BR Nominal');
    if (br?.value === '25500Mbps') {
      anomalies.push('rate-field: BR Nominal 25500Mbps is byte 140 = 0xff ("see byte 222"); ethtool does not decode the real signalling rate');
    }
  } else {
    const f = one('Cable assembly length');
    if (f) {
      const m = /^(\d+(?:\.\d+)?)(m|km)$/.exec(f.value);
      if (!m) throw new ParseError(KIND, f.line, `cable length "${f.value}" is not "<x>m"`);
      let v = Number(m[1]);
      if (m[2] === 'km') {
        if (copper) anomalies.push(`length-unit: "${f.value}" is the pre-release ethtool unit bug; read as ${v} m`);
        else v *= 1000;
      }
      lengthM = Math.round(v * 10000) / 10000 || null;
    }
  }
  if (copper) {
    const placeholder = dropPlaceholderAttenuation(attenuationDb, 'decoded text');
    if (placeholder) anomalies.push(placeholder);
  }
  if (standard === 'SFF-8636') {
    const note = lengthResolutionNote(lengthM, vendor['Vendor PN'], partNumberSaysHalfMetre(vendor['Vendor PN']));
    if (note) anomalies.push(note);
  }

  const diagnostics = readDiagnostics(
    [...fields].flatMap(([label, list]) => list.map((f) => ({ label: normalLabel(label), value: f.value, line: f.line }))).sort((a, b) => a.line - b.line),
  );

  return {
    standard,
    identifier,
    ...(identifierText !== undefined ? { identifierText } : {}),
    vendorName: vendor['Vendor name'],
    vendorOui: vendor['Vendor OUI'],
    vendorPn: vendor['Vendor PN'],
    vendorRev: vendor['Vendor rev'],
    vendorSn: vendor['Vendor SN'],
    dateCode: vendor['Date code'],
    lengthM,
    ...om4,
    attenuationDb,
    ...(techCode !== null && techCode < 16 ? { transmitterTechnology: TRANSMITTER_TECHNOLOGY[techCode]! } : {}),
    anomalies,
    labelStyle,
    transceiverTypes,
    revisionComplianceText: (one('Revision Compliance') ?? one('Revision compliance'))?.value ?? null,
    ...(diagnostics && { diagnostics }),
  };
}
