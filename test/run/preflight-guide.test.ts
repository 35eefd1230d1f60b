// The operator guide is code: every ERROR rule preflight can end a run with has its row in the guide's ERROR table
// (docs/operator-guide.md section 5), and the fixes the NCCL checks print are the ones the guide gives.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..', '..');
const guide = readFileSync(join(ROOT, 'docs', 'operator-guide.md'), 'utf8');
const steps = join(ROOT, 'src', 'run', 'steps');
const source = readdirSync(steps)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => readFileSync(join(steps, f), 'utf8'))
  .join('\n');

describe('docs/operator-guide.md follows preflight', () => {
  it('lists every preflight rule in its ERROR table', () => {
    const rules = [...new Set([...source.matchAll(/'(preflight-[a-z-]+)'/g)].map((m) => m[1]!))].sort();
    expect(rules).toEqual(expect.arrayContaining(['preflight-nccl-conf', 'preflight-nccl-env', 'preflight-tools']));
    const rows = (r: string) => guide.split('\n').filter((l) => l.startsWith('| ') && l.includes(`\`${r}\``));
    expect(rules.filter((r) => rows(r).length === 0)).toEqual([]);
  });

  it("gives the section and the fixes the NCCL checks' advice names", () => {
    expect(source).toContain(`'docs/operator-guide.md section 1, "NCCL over non-interactive SSH"'`);
    expect(guide).toContain('### NCCL over non-interactive SSH');
    expect(guide).toContain("sudo sed -i 's/^NCCL_IB_DISABLE=.*/NCCL_IB_DISABLE=0/' /etc/nccl.conf");
    expect(source).toContain("sed -i 's/^NCCL_IB_DISABLE=.*/NCCL_IB_DISABLE=0/' ${file}");
    expect(guide).toContain('-x NCCL_IB_DISABLE=0');
    expect(guide).toMatch(/above\*\* its `case \$- in \*i\*\) ;; \*\) return;;\nesac` line/);
  });
});
