import { CMIS_IDENTIFIERS, IDENTIFIER_NAMES, SFF8636_IDENTIFIERS, TRANSMITTER_TECHNOLOGY, asciiField, hex2, isCopperTechnology, ouiField } from './bytes.js';
import { cmisLengthM } from './cmis.js';

// Which ethtool to imitate: 6.7 (Ubuntu 24.04, old labels) or 7.0 (new labels, SFF-8636 7.0/12.9 GHz bug).
export type EthtoolStyle = '6.7' | '7.0';

const line = (label: string, value: string): string => `\t${label.padEnd(41)} : ${value}\n`;

const ENCODING = ['unspecified', '8B/10B', '4B/5B', 'NRZ', 'SONET Scrambled', '64B/66B', 'Manchester', '256B/257B', 'PAM4'];
const SFF8636_REV = [
  'Revision not specified',
  'SFF-8436 Rev 4.8 or earlier',
  'SFF-8436 Rev 4.8 or earlier',
  'SFF-8636 Rev 1.3 or earlier',
  'SFF-8636 Rev 1.4',
  'SFF-8636 Rev 1.5',
  'SFF-8636 Rev 2.0',
  'SFF-8636 Rev 2.5/2.6/2.7',
];
const BYTE131: ReadonlyArray<[number, string]> = [
  [0x01, '40G Ethernet: 40G Active Cable (XLPPI)'],
  [0x02, '40G Ethernet: 40G Base-LR4'],
  [0x04, '40G Ethernet: 40G Base-SR4'],
  [0x08, '40G Ethernet: 40G Base-CR4'],
];
// ethtool 6.x qsfp.c wording for the copper extended codes; any other code prints "(reserved or unknown)" here
// (ethtool names many optical codes this table leaves out; 0x3f is unknown to ethtool 6.x too).
const EXT_TEXT: Readonly<Record<number, string>> = {
  0x0b: '100G Ethernet: 100G Base-CR4 or 25G Base-CR CA-L',
  0x0c: '25G Ethernet: 25G Base-CR CA-S',
  0x0d: '25G Ethernet: 25G Base-CR CA-N',
  0x40: '50GBASE-CR, 100GBASE-CR2, or 200GBASE-CR4',
};
const MODULE_STATE: Readonly<Record<number, string>> = { 1: 'ModuleLowPwr', 2: 'ModulePwrUp', 3: 'ModuleReady', 4: 'ModulePwrDn', 5: 'ModuleFault' };
const SFF_COPPER_OLD = ['Copper cable unequalized', 'Copper cable passive equalized'];

function techText(code: number, old: boolean): string {
  if (old && (code === 0xa || code === 0xb)) return SFF_COPPER_OLD[code - 0xa]!;
  return TRANSMITTER_TECHNOLOGY[code] ?? 'reserved';
}

function temperature(b: ArrayLike<number>, at: number): string {
  const raw = (((b[at]! << 8) | b[at + 1]!) << 16) >> 16;
  const c = raw / 256;
  return `${c.toFixed(2)} degrees C / ${(c * 1.8 + 32).toFixed(2)} degrees F`;
}

function vendorLines(b: ArrayLike<number>, m: { name: number; oui: number; pn: number; rev: number; sn: number; date: number }): string {
  const a = Array.from(b);
  const t = (from: number, len: number): string => asciiField(a, from, from + len - 1).text;
  return (
    line('Vendor name', t(m.name, 16)) +
    line('Vendor OUI', ouiField(a, m.oui)) +
    line('Vendor PN', t(m.pn, 16)) +
    line('Vendor rev', t(m.rev, 2)) +
    line('Vendor SN', t(m.sn, 16)) +
    line('Date code', t(m.date, 8))
  );
}

function sff8636Text(b: ArrayLike<number>, style: EthtoolStyle): string {
  const old = style === '6.7';
  const at = (i: number): number => b[i]!;
  const ext = at(129);
  let out = line('Identifier', `${hex2(at(0))} (${IDENTIFIER_NAMES[at(0)] ?? 'reserved or unknown'})`);
  out += line('Extended identifier', hex2(ext));
  out += line('Extended identifier description', `${['1.5', '2.0', '2.5', '3.5'][ext >> 6]}W max. Power consumption`);
  out += line('Extended identifier description', `${ext & 0x08 ? 'CDR present in TX' : 'No CDR in TX'}, ${ext & 0x04 ? 'CDR present in RX' : 'No CDR in RX'}`);
  out += line('Extended identifier description', `${old ? '' : ' '}High Power Class (> 3.5 W) ${ext & 0x03 ? 'enabled' : 'not enabled'}`);
  if (!old) out += line('Power set', 'Off') + line('Power override', 'Off');
  out += line('Connector', `${hex2(at(130))} (${at(130) === 0x23 ? 'No separable connector' : 'reserved or unknown'})`);
  out += line('Transceiver codes', Array.from({ length: 8 }, (_, k) => hex2(at(131 + k))).join(' '));
  const types = BYTE131.filter(([bit]) => at(131) & bit).map(([, t]) => t);
  if (at(131) & 0x80) types.push(EXT_TEXT[at(192)] ?? '(reserved or unknown)');
  for (const t of old ? types : types.slice(-1)) out += line('Transceiver type', t);
  out += line('Encoding', `${hex2(at(139))} (${ENCODING[at(139)] ?? 'reserved or unknown'})`);
  out += line(old ? 'BR, Nominal' : 'BR Nominal', `${at(140) * 100}Mbps`);
  out += line('Rate identifier', hex2(at(141)));
  out += line(old ? 'Length (SMF,km)' : 'Length (SMF)', `${at(142)}km`);
  out += line(old ? 'Length (OM3 50um)' : 'Length (OM3)', `${at(143) * 2}m`);
  out += line(old ? 'Length (OM2 50um)' : 'Length (OM2)', `${at(144)}m`);
  out += line(old ? 'Length (OM1 62.5um)' : 'Length (OM1)', `${at(145)}m`);
  out += line('Length (Copper or Active cable)', `${at(146)}m`);
  const tech = at(147) >> 4;
  out += line('Transmitter technology', `${hex2(at(147))} (${techText(tech, old)})`);
  if (isCopperTechnology(tech)) {
    out += line('Attenuation at 2.5GHz', `${at(186)}db`);
    out += line('Attenuation at 5.0GHz', `${at(187)}db`);
    // ethtool >= 6.14 reads bytes 186/187 again for 7.0/12.9 GHz (samples/ethtool-module/
    // qsfp28-dac-oem-3m-new-ethtool-labels-attenuation-bug.txt); imitate it.
    out += line('Attenuation at 7.0GHz', `${at(old ? 188 : 186)}db`);
    out += line('Attenuation at 12.9GHz', `${at(old ? 189 : 187)}db`);
  }
  out += vendorLines(b, { name: 148, oui: 165, pn: 168, rev: 184, sn: 196, date: 212 });
  out += line('Revision Compliance', SFF8636_REV[at(1)] ?? 'Unallocated');
  out += line('Module temperature', temperature(b, 22));
  out += line('Module voltage', `${(((at(26) << 8) | at(27)) / 10000).toFixed(4)} V`);
  return out;
}

function cmisText(b: ArrayLike<number>, style: EthtoolStyle): string {
  const old = style === '6.7';
  const at = (i: number): number => b[i]!;
  let out = line('Identifier', `${hex2(at(0))} (${IDENTIFIER_NAMES[at(0)] ?? 'reserved or unknown'})`);
  out += line('Power class', String((at(200) >> 5) + 1));
  out += line('Max power', `${(at(201) * 0.25).toFixed(2)}W`);
  out += line('Connector', `${hex2(at(203))} (${at(203) === 0x23 ? 'No separable connector' : 'reserved or unknown'})`);
  const len = cmisLengthM(at(202));
  out += line('Cable assembly length', old ? `${len.toFixed(2)}m` : `${len.toFixed(4)}m`);
  const tech = at(212);
  out += line('Transmitter technology', `${hex2(tech)} (${TRANSMITTER_TECHNOLOGY[tech] ?? 'reserved'})`);
  if (isCopperTechnology(tech)) {
    out += line('Attenuation at 5GHz', `${at(204)}db`);
    out += line('Attenuation at 7GHz', `${at(205)}db`);
    out += line('Attenuation at 12.9GHz', `${at(206)}db`);
    out += line('Attenuation at 25.8GHz', `${at(207)}db`);
  }
  out += vendorLines(b, { name: 129, oui: 145, pn: 148, rev: 164, sn: 166, date: 182 });
  out += line('Revision compliance', `Rev. ${at(1) >> 4}.${at(1) & 0x0f}`);
  const state = (at(3) >> 1) & 0x07;
  out += line(old ? 'Module State' : 'Module state', `${hex2(state)} (${MODULE_STATE[state] ?? 'reserved'})`);
  out += line('LowPwrAllowRequestHW', at(26) & 0x40 ? 'On' : 'Off');
  out += line('LowPwrRequestSW', at(26) & 0x10 ? 'On' : 'Off');
  out += line('Module temperature', temperature(b, 14));
  out += line('Module voltage', `${(((at(16) << 8) | at(17)) / 10000).toFixed(4)} V`);
  return out;
}

// Decoded `ethtool -m` text for the simulator, generated from an image the way ethtool 6.7 / 7.0 lays it out.
export function formatEthtoolModuleText(bytes: ArrayLike<number>, opts: { style: EthtoolStyle }): string {
  if (bytes.length < 256) throw new Error(`formatEthtoolModuleText: need 256 bytes, got ${bytes.length}`);
  const id = bytes[0]!;
  if (SFF8636_IDENTIFIERS.has(id)) return sff8636Text(bytes, opts.style);
  if (CMIS_IDENTIFIERS.has(id)) return cmisText(bytes, opts.style);
  throw new Error(`formatEthtoolModuleText: identifier ${hex2(id)} is neither SFF-8636 nor CMIS`);
}
