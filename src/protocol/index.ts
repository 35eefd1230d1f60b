// One import for the run orchestrator: load, render, types.
export { loadProtocol, ownOrBuiltin, parseProtocol } from './load.js';
export { limitOf } from './limits.js';
export { renderCommand } from './template.js';
export * from './types.js';
