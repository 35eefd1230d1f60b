// One import for the run orchestrator: load, render, types.
export { loadProtocol, parseProtocol, limitOf } from './load.js';
export { renderCommand, bidirectionalFlag } from './template.js';
export { validateProtocol, type ValidateOptions } from './validate.js';
export * from './types.js';
