// The watch settings of the shipped default protocol (protocols/spark-burnin.json), for analysis tests.
import { join } from 'node:path';
import { loadProtocol } from '../../src/protocol/load.js';
import type { WatchSettings } from '../../src/analysis/early-stop.js';
import { watchConfigOf } from '../../src/rules/watch-config.js';

export const DEFAULT_PROTOCOL = loadProtocol(join(import.meta.dirname, '..', '..', 'protocols', 'spark-burnin.json'));
export const DEFAULT_RULES = watchConfigOf({ watch: 'held-windows' }, DEFAULT_PROTOCOL.limits) as Omit<WatchSettings, 'gradedPhases' | 'lanes'>;
