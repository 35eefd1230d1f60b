import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { escapeXml } from '../../src/report/escape.js';
import { renderCertificateHtml, writeCertificateHtml } from '../../src/report/certificate-html.js';
import { certificateContent } from '../../src/report/certificate-content.js';
import { headlineOf } from '../../src/grading/grade-run.js';
import { RULES_VERSION } from '../../src/rules/versions.js';
import { crowdedFailRecord, errorRecord, failingCloneRecord, failingCloneTimeseries, passRecord, passTimeseries } from '../fixtures/records/build.js';
import { makeRunDir, tempRoot } from '../fixtures/records/run-dir.js';

const sig = { fingerprint: `sha256:${'ab'.repeat(32)}`, journalSha256: 'cd'.repeat(32) };

describe('certificate.html (static checks; the browser test renders it)', () => {
  const html = renderCertificateHtml(failingCloneRecord(), failingCloneTimeseries(), sig);

  it('escapes EEPROM vendor text', () => {
    expect(html).toContain('OEM &lt;clone&gt; &amp; &quot;co&quot;');
    expect(html).not.toContain('<clone>');
  });

  it('is self-contained: no scripts, links, external URLs or web fonts', () => {
    expect(html).not.toMatch(/<script|<link|@import|@font-face|url\(/i);
    expect(html.match(/(?:src|href)=/gi)).toBeNull();
    // the only URL allowed is the SVG namespace identifier
    expect([...html.matchAll(/https?:\/\/[^"'\s)]+/g)].map((m) => m[0]).every((u) => u === 'http://www.w3.org/2000/svg')).toBe(true);
  });

  it('prints on A4 and says SIMULATED, the verdict, each reason with its limit, and the signer', () => {
    expect(html).toContain('@page { size: A4;');
    expect(html).toContain('SIMULATED RUN');
    expect(html).toContain('<div class="verdict v-FAIL">FAIL</div>');
    expect(html).toContain('link-down &lt;= 0 events');
    expect(html).toContain('lane-ratio &lt;= 100 x (marginal 10 x)');
    expect(html).toContain(sig.fingerprint);
    expect(html).toContain('185.10'); // summed ib_write_bw medians
    expect(html).toContain('19.02 GB/s'); // NCCL busbw
    expect(html).toContain('attenuation 0 dB at 7.0GHz and 12.9GHz');
    expect(html).toContain('6.11.0-1016-nvidia');
  });

  it('a real PASS run has no SIMULATED banner; an unsigned one says UNSIGNED', () => {
    const pass = renderCertificateHtml({ ...passRecord(), simulated: false, scenario: undefined }, passTimeseries());
    expect(pass).not.toContain('SIMULATED RUN');
    expect(pass).toContain('UNSIGNED');
    expect(pass).toContain('<div class="verdict v-PASS">PASS</div>');
  });

  it('prints the node skew with the calibrated clock offsets removed, never the raw spread beside it', () => {
    const corrected = renderCertificateHtml(
      { ...passRecord(), sampling: { ...passRecord().sampling, skewP99Ms: 4.2, rawSkewP99Ms: 8004.2 } },
      passTimeseries(),
    );
    expect(corrected).toContain('node skew p99 4 ms (node clock offsets removed)');
    expect(corrected).not.toContain('8004');
    // A record written before the raw figure existed holds the raw skew only: printed without the claim.
    expect(renderCertificateHtml(passRecord(), passTimeseries())).toContain('node skew p99 9 ms, ');
  });

  it('an ERROR run is a run report with no PASS/FAIL wording', () => {
    const text = renderCertificateHtml(errorRecord())
      .replace(/<style>[\s\S]*?<\/style>/, '')
      .replace(/<[^>]+>/g, ' ');
    expect(text).toContain('Run report — NOT a certificate');
    expect(text).toContain('spark-b: ssh session closed (ECONNRESET) during soak-idle');
    expect(text).not.toMatch(/\b(PASS|FAIL|MARGINAL|passed|failed)\b/i);
    expect(text).not.toMatch(/Cable qualification certificate/);
    expect(text).toContain('No EEPROM identity was read: spark-a enp1s0f1np1: ethtool -m: Operation not permitted; spark-b enp1s0f1np1: not read.');
    expect(text).toContain('Per-lane pre-FEC error rate, receiver spark-a: no data');
  });

  it('writes certificate.html / run-report.html atomically into the run dir', async () => {
    const root = tempRoot();
    const dir = makeRunDir(root, errorRecord());
    const [p] = await writeCertificateHtml(errorRecord(), dir, {});
    expect(p!.endsWith('/run-report.html')).toBe(true);
    expect(readFileSync(p!, 'utf8')).toContain('Run report — NOT a certificate');
    const dir2 = makeRunDir(root, failingCloneRecord());
    const [p2] = await writeCertificateHtml(failingCloneRecord(), dir2, { timeseries: failingCloneTimeseries(), signature: sig });
    expect(p2!.endsWith('/certificate.html')).toBe(true);
  });

  it('groups the limit checks one row per rule with count and worst grade', () => {
    const crowded = renderCertificateHtml(crowdedFailRecord(), failingCloneTimeseries());
    // 16 generated lane-ber checks, all PASS at 1e-12
    expect(crowded).toMatch(
      /<tr><td>lane-ber<\/td><td>16 checks<\/td><td class="num">1\.00e-12<\/td><td>x &lt;= Marginal:1e-8 &lt;= 1e-6<\/td><td class="grade-PASS">PASS <span class="muted">\(16\/16\)<\/span><\/td><\/tr>/,
    );
    expect(crowded).toMatch(/<tr><td>lane-ratio<\/td><td>spark-a · soak-loaded · lane 2<\/td>/);
  });

  it('no EEPROM string can open a tag or attribute, whatever its bytes', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), (vendor) => {
        const r = failingCloneRecord();
        r.cable.vendor = vendor;
        for (const end of r.cable.ends) end.identity!.vendorName = vendor;
        const out = renderCertificateHtml(r);
        const html = out.replace(/<style>[\s\S]*?<\/style>/, '');
        expect(html.match(/<[a-zA-Z!/?]/g)?.length).toBe(
          renderCertificateHtml(failingCloneRecord())
            .replace(/<style>[\s\S]*?<\/style>/, '')
            .match(/<[a-zA-Z!/?]/g)?.length,
        );
      }),
      { numRuns: 50 },
    );
    expect(escapeXml('a\u0000b\u001f<')).toBe('a\\x00b\\x1f&lt;');
  });
});

describe('certificate.html: what a PASS states first, and the rules that graded it', () => {
  it('a PASS leads with the loaded soak per receiver and lane; the lane ratio with no errors reads "no errors"', () => {
    const rec = passRecord();
    const analysis = rec.analysis!;
    const phases = [
      { name: 'soak-idle', kind: 'soak', gpuLoad: false },
      { name: 'soak-loaded', kind: 'soak', gpuLoad: true },
    ];
    const withHeadline = { ...rec, headline: headlineOf(analysis, phases, { rule: 'fec-margin', direction: 'min', fail: 1, marginal: 2, unit: 'decades' }) };
    const html = renderCertificateHtml(withHeadline, passTimeseries());
    expect(html).toContain('What the loaded soak proved (soak-loaded, per receiver and lane)');
    // The bound sentence is made of this soak's own 60 minutes.
    expect(html).toContain('zero errors over 60 min at 212.5 Gb/s bound the BER below 3.9e-15.');
    expect(html).toContain('<h1>Cable qualification certificate</h1>');
    expect(html.indexOf('What the loaded soak proved')).toBeLessThan(html.indexOf('Verdict and reasons'));
    expect(html).toContain(`(grading rules version ${RULES_VERSION})`);
    expect(html).toContain('<td>no errors</td>');
    expect(html).not.toMatch(/>0x</);
    // a FAIL leads with its reasons, without the PASS statement
    expect(renderCertificateHtml(failingCloneRecord(), failingCloneTimeseries(), sig)).not.toContain('What the loaded soak proved');
  });
});

describe('certificate: the conditions the soaks measured (rules version 3)', () => {
  // GENERATED figures in the shape the record builder states them.
  const soakLoad = {
    link: [
      {
        phase: 'soak-loaded',
        from: 'spark-a',
        to: 'spark-b',
        rails: 2,
        rows: 1440,
        medianGbps: 185.12,
        benchmarkGbps: 185.1,
        pctOfBenchmark: 100.01,
        longestGapS: 10,
      },
      {
        phase: 'soak-loaded',
        from: 'spark-b',
        to: 'spark-a',
        rails: 2,
        rows: 1440,
        medianGbps: 184.9,
        benchmarkGbps: 185.2,
        pctOfBenchmark: 99.84,
        longestGapS: 10,
      },
    ],
    gpu: [{ node: 'spark-a', phase: 'soak-loaded', fromS: 760.5, samples: 708, meanPct: 97.04 }],
  };
  it("states each direction's load against its own ib_write_bw figure, the GPUs judged, and counters cleared", () => {
    const rec = { ...passRecord(), soakLoad, counterResets: [{ tS: 1500, node: 'spark-b', phase: 'soak-loaded', rebooted: false }] };
    expect(certificateContent(rec).soakLoad).toEqual(soakLoad);
    const html = renderCertificateHtml(rec, passTimeseries());
    expect(html).toContain(
      '<tr><th>load in soak-loaded</th><td>spark-a → spark-b 185.1 Gb/s median (100.0 % of its ib_write_bw 185.1), 1440 rows, longest wait 10 s; spark-b → spark-a 184.9 Gb/s median (99.8 % of its ib_write_bw 185.2), 1440 rows, longest wait 10 s; spark-a GPUs 97.0 % mean from 761 s (708 readings)</td></tr>',
    );
    expect(html).toContain('<tr><th>counter resets</th><td>spark-b at 1500 s (soak-loaded): cleared on the running node, counted from zero</td></tr>');
  });
  it('a record from before (no soak figures) renders as it did: no such rows, no such fields', () => {
    const rec = passRecord();
    expect('soakLoad' in certificateContent(rec)).toBe(false);
    expect(renderCertificateHtml(rec, passTimeseries())).not.toContain('load in ');
  });
});

describe('certificate: the two PCIe functions of a cage (rules version 4)', () => {
  const withDivergence = (functionDivergence: NonNullable<NonNullable<ReturnType<typeof passRecord>['analysis']>['functionDivergence']>) => {
    const rec = passRecord();
    return { ...rec, analysis: { ...rec.analysis!, functionDivergence } };
  };

  it('says the functions agreed, or names each counter they counted differently with both counts', () => {
    expect(renderCertificateHtml(withDivergence([]), passTimeseries())).toContain(
      '<tr><th>PCIe functions</th><td>both PCIe functions of each cage counted every graded counter alike</td></tr>',
    );
    const d = [
      {
        node: 'spark-b',
        counter: 'rx_err_lane_2_phy',
        counts: [
          { netdev: 'enp1s0f1np1', count: 12 },
          { netdev: 'enP2p1s0f1np1', count: 15 },
        ],
      },
    ];
    expect(certificateContent(withDivergence(d)).functionDivergence).toEqual(d);
    expect(renderCertificateHtml(withDivergence(d), passTimeseries())).toContain(
      '<tr><th>PCIe functions</th><td>the PCIe functions of a cage counted differently (the larger is graded): spark-b rx_err_lane_2_phy: enp1s0f1np1 12, enP2p1s0f1np1 15</td></tr>',
    );
  });

  it('a record graded before version 4 has no such row or field', () => {
    expect('functionDivergence' in certificateContent(passRecord())).toBe(false);
    expect(renderCertificateHtml(passRecord(), passTimeseries())).not.toContain('PCIe functions');
  });
});
