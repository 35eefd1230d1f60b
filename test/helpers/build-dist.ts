import { spawnSync } from 'node:child_process';

// The system tier's global setup (test/helpers/tiers.ts): the tests that spawn the real CLI (`node bin/cablequal.js`)
// need dist/ built from the current sources, built once per run. A type error elsewhere still emits JavaScript (tsc
// without noEmitOnError), so a failed build only warns.
export default function setup(): void {
  const r = spawnSync('npm', ['run', 'build', '--silent'], { cwd: process.cwd(), encoding: 'utf8', timeout: 120_000 });
  if (r.status !== 0)
    process.stderr.write(
      `globalSetup: npm run build exited ${r.status}: spawned-CLI tests run the dist/ it emitted\n${(r.stdout + r.stderr).slice(0, 2000)}\n`,
    );
}
