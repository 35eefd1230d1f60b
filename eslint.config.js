// ESLint flat config: typescript-eslint's recommended rules, plus the layering of src/ as import boundaries.
// The layers are described in ARCHITECTURE.md; LAYERS below is their one declaration. Each src folder lists the
// folders it may import; importing any other src folder (an upward or sideways import) is an error, and so is a
// node I/O module in the folders that must stay pure (they get their input as values and are tested over samples).
import { builtinModules } from 'node:module';
import js from '@eslint/js';
import { defineConfig } from 'eslint/config';
import tseslint from 'typescript-eslint';

// src folder -> the src folders it may import (besides itself). Bottom of the stack first; cli is the top.
export const LAYERS = {
  domain: [],
  eeprom: ['domain'],
  analysis: ['domain'],
  rules: ['domain', 'analysis'],
  protocol: ['domain', 'io', 'rules'],
  grading: ['domain', 'analysis', 'rules', 'protocol'],
  io: ['domain'],
  transport: ['domain', 'io'],
  probes: ['domain', 'eeprom', 'transport'],
  sampling: ['domain', 'probes', 'transport'],
  report: ['domain', 'io', 'rules'],
  metrics: ['domain', 'analysis'],
  run: ['domain', 'eeprom', 'analysis', 'rules', 'protocol', 'grading', 'io', 'transport', 'probes', 'sampling', 'report'],
  watch: ['domain', 'eeprom', 'analysis', 'rules', 'protocol', 'grading', 'io', 'transport', 'probes', 'sampling', 'report', 'metrics', 'run'],
  sim: ['domain', 'eeprom', 'io', 'transport', 'probes'],
  store: ['domain', 'io', 'analysis', 'rules', 'protocol', 'grading', 'transport', 'report', 'metrics', 'run', 'watch'],
  batch: ['domain', 'eeprom', 'io', 'analysis', 'rules', 'protocol', 'grading', 'transport', 'probes', 'sampling', 'report', 'run'],
  dashboard: ['domain', 'io', 'analysis', 'rules', 'report', 'metrics', 'run', 'store', 'watch'],
  cli: [
    'domain',
    'eeprom',
    'io',
    'analysis',
    'rules',
    'protocol',
    'grading',
    'transport',
    'probes',
    'sampling',
    'report',
    'metrics',
    'run',
    'watch',
    'sim',
    'store',
    'batch',
    'dashboard',
  ],
};

// Folders that do no I/O: no file system, processes, sockets or HTTP (domain may import no node module at all).
export const PURE = ['domain', 'eeprom', 'analysis', 'rules', 'grading', 'probes', 'sampling'];
const IO_MODULES = ['fs', 'fs/promises', 'child_process', 'net', 'http', 'https', 'http2', 'dgram', 'tls', 'readline', 'worker_threads', 'cluster'];

const escape = (s) => s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

// The no-restricted-imports options for one src folder.
export function boundaryOptions(folder) {
  const allowed = new Set([folder, ...LAYERS[folder]]);
  const denied = Object.keys(LAYERS).filter((f) => !allowed.has(f));
  const patterns = [];
  if (denied.length > 0) {
    patterns.push({
      regex: `^(\\.\\./)+(${denied.join('|')})(/|$)`,
      message: `src/${folder} may import only src/{${[...allowed].join(',')}} (the layering in eslint.config.js and ARCHITECTURE.md).`,
    });
  }
  if (folder === 'domain') {
    patterns.push({
      regex: `^(node:.*|${builtinModules.map(escape).join('|')})$`,
      message: 'src/domain imports no node module: it is plain data and pure functions.',
    });
  } else if (PURE.includes(folder)) {
    const io = IO_MODULES.flatMap((m) => [m, `node:${m}`]);
    patterns.push({
      regex: `^(${io.map(escape).join('|')})$`,
      message: `src/${folder} does no I/O: take the data as an argument (or a CommandRunner) and let run/ or cli/ do the I/O.`,
    });
  }
  return { patterns };
}

export default defineConfig(
  { ignores: ['dist/**', 'node_modules/**', 'reports/**', 'test/fixtures/**', 'coverage/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      ecmaVersion: 2023,
      sourceType: 'module',
      globals: {
        process: 'readonly',
        console: 'readonly',
        Buffer: 'readonly',
        URL: 'readonly',
        setTimeout: 'readonly',
        clearTimeout: 'readonly',
        setInterval: 'readonly',
        clearInterval: 'readonly',
        setImmediate: 'readonly',
        AbortController: 'readonly',
        AbortSignal: 'readonly',
        TextEncoder: 'readonly',
        TextDecoder: 'readonly',
        structuredClone: 'readonly',
        queueMicrotask: 'readonly',
        performance: 'readonly',
        fetch: 'readonly',
      },
    },
    rules: {
      // Stripping control characters from untrusted text (cable EEPROM strings, node output) is the point of those
      // regular expressions: src/domain/text.ts, src/report/escape.ts and the probes' field screens.
      'no-control-regex': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // Tests reach into parsed JSON (protocols, schemas, journal lines) whose shape is what they assert.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  ...Object.keys(LAYERS).map((folder) => ({
    files: [`src/${folder}/**/*.ts`],
    rules: { 'no-restricted-imports': ['error', boundaryOptions(folder)] },
  })),
);
