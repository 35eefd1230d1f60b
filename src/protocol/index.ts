// One import for the run orchestrator: load, render, types.
export { loadProtocol, parseProtocol, limitOf } from './load.js';
export { renderCommand } from './template.js';
export * from './types.js';
