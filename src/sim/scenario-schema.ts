// The JSON Schema of a scenario file (samples/scenarios/*.json, or one given to --sim): ScenarioSpec of scenario.ts
// field for field, no field it does not declare (a typo is refused, not ignored), each value in the range the model
// and the EEPROM encoder can represent. Checked at load by ajv (as protocols are), so a bad file is one line naming
// the field (exit 2) before the lab starts, never a run that ends "harness error". What a schema cannot say (the two
// node names differ, lane curves per family, curve order) stays in validateScenario.
import { compileSchema, type JsonSchema } from '../io/json-schema.js';

const num = (minimum: number, maximum: number, title?: string): JsonSchema => ({ type: 'number', minimum, maximum, ...(title ? { title } : {}) });
const positive = (maximum: number, title: string): JsonSchema => ({ type: 'number', exclusiveMinimum: 0, maximum, title });
const text = (pattern: string, title: string): JsonSchema => ({ type: 'string', pattern, title });
const closed = (properties: Record<string, JsonSchema>, required: string[]): JsonSchema => ({
  type: 'object',
  properties,
  required,
  additionalProperties: false,
});
const pair = (items: JsonSchema): JsonSchema => ({ type: 'array', items, minItems: 2, maxItems: 2 });

// An EEPROM text field: printable ASCII, as many bytes as the memory map holds (SFF-8636 / CMIS page 00h).
const eepromText = (bytes: number) => text(`^[\\x20-\\x7e]{1,${bytes}}$`, `printable ASCII, 1 to ${bytes} characters (${bytes} EEPROM bytes)`);
const ipv4 = text('^((25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)\\.){3}(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)$', 'a dotted IPv4 address');
const nodeName = text('^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$', 'a host name (letters, digits, . _ -; at most 63)');
const programName = text('^[A-Za-z0-9_./+-]{1,255}$', 'a program name or an absolute path');
const railNames = closed(
  {
    netdev: text('^[A-Za-z0-9][A-Za-z0-9_.-]{0,14}$', 'an interface name (at most 15 characters)'),
    rdmaDevice: text('^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$', 'an RDMA device name'),
    pci: text('^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\\.[0-7]$', 'a PCI function (0000:01:00.1)'),
  },
  ['netdev', 'rdmaDevice'],
);
// Link rates cap at the 200 Gb/s of a Spark's two rails together.
const gbps = positive(200, 'Gb/s in (0, 200]');
// [NIC temperature C, events per second] points.
const curve: JsonSchema = { type: 'array', minItems: 1, items: pair({ type: 'number', minimum: 0, maximum: 1e12 }), title: 'a rate curve' };
const lanes: JsonSchema = { type: 'array', minItems: 2, maxItems: 4, items: curve };

function mtu(): JsonSchema {
  return { type: 'integer', minimum: 68, maximum: 9978, title: 'an MTU in bytes, 68 to 9978 (the mlx5 maximum)' };
}

const node = closed(
  {
    name: nodeName,
    hostname: nodeName,
    user: text('^[a-z_][a-z0-9_-]{0,31}$', 'a user name'),
    railIps: pair(ipv4),
    throttledGbps: { anyOf: [gbps, pair({ anyOf: [gbps, { type: 'null' }] })], title: 'Gb/s in (0, 200], or [rail 0, rail 1] with null for a full-speed rail' },
    cage: { enum: [0, 1] },
    gpuLoadIneffective: { type: 'boolean' },
    sudoRefuses: { type: 'boolean' },
    sudoCommands: { type: 'array', items: programName },
    nicTempOffsetC: num(-30, 30, 'degrees C in [-30, 30]'),
    missing: { type: 'array', items: programName },
    sshFromPeer: { enum: ['ok', 'needs-password', 'unknown-host-key'] },
    interfaces: pair(pair(railNames)),
    speedMbps: { enum: [100000, 200000] },
    nicFirmware: text('^[\\x20-\\x7e]{1,64}$', 'printable ASCII, at most 64 characters'),
    ncclConf: { type: 'string', maxLength: 4096, title: "the text of the node's /etc/nccl.conf (at most 4096 characters)" },
    ncclVersion: text('^[0-9][0-9A-Za-z.+_-]{0,31}$', 'a version such as 2.28.9+cuda13.0'),
    recoveryCounter: { type: 'boolean' },
    perftestTrailer: { type: 'array', maxItems: 20, items: text('^[\\x20-\\x7e\\t]{0,200}$', 'a line of printable ASCII (at most 200 characters)') },
    mtu: mtu(),
    lldpd: { type: 'boolean' },
  },
  // A cluster's nodes take their addresses from their cables (scenario-cluster.ts); validateScenario asks the others.
  ['name'],
);

// One attenuation byte each (SFF-8636 bytes 142-145, CMIS 204-207): whole dB from 0 to 255.
const attenuationByte: JsonSchema = { type: 'integer', minimum: 0, maximum: 255, title: 'a whole number of dB in [0, 255] (one EEPROM byte)' };
const eeprom = closed(
  {
    vendorName: eepromText(16),
    vendorOui: text('^[0-9a-fA-F]{2}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}$', 'three hex bytes, xx:xx:xx'),
    vendorPn: eepromText(16),
    vendorRev: eepromText(2),
    vendorSn: eepromText(16),
    dateCode: text('^\\d{6}[\\x20-\\x7e]{0,2}$', 'YYMMDD and an optional 2-character lot'),
    lengthM: num(0, 255, 'metres in [0, 255]'),
    attenuationDb: { type: 'array', items: attenuationByte, minItems: 4, maxItems: 4 },
    memoryMap: { enum: ['sff8636', 'cmis'] },
    attenuation25gDb: attenuationByte,
  },
  ['vendorName', 'vendorOui', 'vendorPn', 'vendorRev', 'vendorSn', 'dateCode', 'lengthM', 'attenuationDb'],
);

const outcomes = ['PASS', 'MARGINAL', 'FAIL', 'ERROR', 'ABORTED'];
const expected = closed({ outcome: { enum: outcomes }, why: { type: 'string', maxLength: 2000 } }, ['outcome', 'why']);

// scenario.ts ScenarioSpec.
export const SCENARIO_SCHEMA: JsonSchema = closed(
  {
    name: text('^[a-z0-9][a-z0-9-]{0,63}$', 'lower-case letters, digits and -, at most 64'),
    generated: text('not a recording', 'a sentence saying it is a simulator scenario, not a recording'),
    description: { type: 'string', maxLength: 2000 },
    expected,
    nodes: { type: 'array', items: node, minItems: 2, maxItems: 8 },
    cable: closed(
      {
        family: { enum: ['QSFP56', 'QSFP112'] },
        eepromClass: { enum: ['QSFP28', 'QSFP56', 'QSFP112'] },
        eeprom,
        serialByNode: { type: 'object', propertyNames: nodeName, additionalProperties: eepromText(16) },
      },
      ['family', 'eeprom'],
    ),
    thermal: closed(
      {
        ambientC: num(-20, 80, 'degrees C in [-20, 80]'),
        linkLoadC: num(0, 60, 'degrees C in [0, 60]'),
        gpuLoadC: num(0, 60, 'degrees C in [0, 60]'),
        tauS: positive(86400, 'seconds in (0, 86400]'),
      },
      ['ambientC', 'linkLoadC', 'gpuLoadC', 'tauS'],
    ),
    lanes,
    lanesByReceiver: { type: 'object', propertyNames: nodeName, additionalProperties: lanes },
    burstBits: { type: 'array', minItems: 1, items: pair({ type: 'number', exclusiveMinimum: 0, maximum: 1000 }) },
    uncorrectablePerS: curve,
    recoveries: { type: 'array', maxItems: 1000, items: closed({ atS: num(0, 604_800, 'lab seconds in [0, 604800]'), node: nodeName }, ['atS', 'node']) },
    flaps: {
      type: 'array',
      maxItems: 100,
      items: closed({ afterIdleLinkLoadS: num(0, 86400, 'seconds in [0, 86400]'), downS: positive(3600, 'seconds in (0, 3600]') }, [
        'afterIdleLinkLoadS',
        'downS',
      ]),
    },
    linkRecoverS: positive(3600, 'seconds in (0, 3600]'),
    rebootS: positive(3600, 'seconds in (0, 3600]'),
    throughput: closed({ railGbps: gbps, loopbackGbps: gbps }, ['railGbps', 'loopbackGbps']),
    nccl: closed({ busbwGBs: positive(100, 'GB/s in (0, 100]'), devices: { enum: [1, 2] } }, ['busbwGBs', 'devices']),
    gpu: closed(
      {
        idleUtilPct: num(0, 100, 'percent in [0, 100]'),
        loadUtilPct: num(0, 100, 'percent in [0, 100]'),
        idleTempC: num(0, 120, 'degrees C in [0, 120]'),
        loadTempC: num(0, 120, 'degrees C in [0, 120]'),
        idlePowerW: num(0, 1000, 'watts in [0, 1000]'),
        loadPowerW: num(0, 1000, 'watts in [0, 1000]'),
      },
      ['idleUtilPct', 'loadUtilPct', 'idleTempC', 'loadTempC', 'idlePowerW', 'loadPowerW'],
    ),
    cables: {
      type: 'array',
      minItems: 1,
      maxItems: 32,
      items: closed(
        {
          scenario: text('^[a-z0-9][a-z0-9-]{0,63}$', "a shipped scenario's name"),
          serial: eepromText(16),
          ends: {
            type: 'array',
            minItems: 2,
            maxItems: 2,
            items: {
              anyOf: [
                closed({ node: nodeName, cage: { enum: [0, 1] }, railIps: pair(ipv4), mtu: mtu() }, ['node', 'cage', 'railIps']),
                closed({ switch: nodeName, port: text('^[A-Za-z0-9][A-Za-z0-9/_.:-]{0,31}$', 'a switch port name') }, ['switch', 'port']),
              ],
            },
          },
          serialByEnd: pair(eepromText(16)),
          expected,
        },
        ['scenario', 'ends'],
      ),
    },
    switch: closed({ name: nodeName, chassisMac: text('^[0-9a-f]{2}(:[0-9a-f]{2}){5}$', 'a MAC address, lower-case hex') }, ['name', 'chassisMac']),
    secondCable: closed(
      {
        scenario: text('^[a-z0-9][a-z0-9-]{0,63}$', "a shipped scenario's name"),
        serial: eepromText(16),
        cage: { enum: [0, 1] },
        railIps: pair(pair(ipv4)),
        expected,
      },
      ['scenario', 'cage', 'railIps', 'expected'],
    ),
    service: closed(
      {
        workload: {
          type: 'array',
          minItems: 1,
          maxItems: 96,
          items: {
            type: 'array',
            minItems: 3,
            maxItems: 3,
            items: false,
            prefixItems: [num(0, 24, 'hours in [0, 24]'), num(0, 1, 'a share in [0, 1]'), num(0, 1, 'a share in [0, 1]')],
          },
          title: '[hour, GPU share, link share] points of the daily workload',
        },
        restartS: num(0, 86400, 'seconds in [0, 86400]'),
      },
      ['workload', 'restartS'],
    ),
  },
  ['name', 'generated', 'description', 'expected', 'nodes', 'cable', 'thermal', 'lanes', 'throughput', 'nccl', 'gpu'],
);

// The first problem of a parsed scenario file (path first), or null.
export const scenarioProblem = compileSchema(SCENARIO_SCHEMA);
