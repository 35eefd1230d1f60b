#!/usr/bin/env node
// Entry point for `npx cablequal`: runs the compiled CLI built by `npm ci` (prepare) or `npm run build`.
import { main } from '../dist/cli/main.js';

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    process.stderr.write(`cablequal: internal error: ${err && err.stack ? err.stack : err}\n`);
    process.exitCode = 70;
  },
);
