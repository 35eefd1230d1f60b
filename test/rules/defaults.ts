// The watch settings of the shipped default protocol (protocols/spark-burnin.json), for analysis tests.
import { join } from 'node:path';
import { loadProtocol } from '../../src/protocol/load.js';
import { watchSettingsOf } from '../../src/rules/watch.js';

export const DEFAULT_PROTOCOL = loadProtocol(join(import.meta.dirname, '..', '..', 'protocols', 'spark-burnin.json'));
export const DEFAULT_RULES = watchSettingsOf(DEFAULT_PROTOCOL.limits);
