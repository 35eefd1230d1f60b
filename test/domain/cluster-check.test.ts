// The cluster check's rule (src/domain/cluster-check.ts) and the record's reading of its journal line
// (src/run/steps/cluster-check.ts): NVIDIA's limits per topology, the environment each topology needs, names from a
// node refused before they reach a command line, and the figure read from nccl-tests' own text, recorded or generated.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { clusterCommand, clusterEnv, clusterLimit, clusterCheckText, rankProblem, type ClusterCheckLine } from '../../src/domain/cluster-check.js';
import { clusterCheckRecordOf } from '../../src/run/steps/cluster-check.js';
import { resultOf } from '../../src/rules/result.js';
import { passRecord } from '../fixtures/records/build.js';

const pairRanks = [
  { node: 'spark-a', host: 'spark-a', devices: ['rocep1s0f1', 'roceP2p1s0f1'] },
  { node: 'spark-b', host: 'spark-b', devices: ['rocep1s0f1', 'roceP2p1s0f1'] },
];
const line = (over: Partial<ClusterCheckLine>): ClusterCheckLine & Record<string, unknown> => ({
  topology: 'pair',
  collective: 'all_gather_perf',
  ranks: pairRanks,
  env: clusterEnv('pair'),
  command: clusterCommand(pairRanks, clusterEnv('pair')),
  launcher: 'spark-a',
  exitCode: 0,
  stdout: '',
  stderr: '',
  ...over,
});
// A recorded all_gather_perf of two DGX Sparks (its source on line 1), without NCCL_DEBUG lines.
const recorded = readFileSync(join(import.meta.dirname, '../../samples/nccl/spark-fb97-all-gather-perf-1G-4G-rdma-ok.txt'), 'utf8');

describe('the cluster check', () => {
  it("NVIDIA's limits: 21.875 GB/s direct and switch, 10 GB/s on the 3-node ring (and, inferred, on a longer ring)", () => {
    expect(['pair', 'switch', 'triangle', 'ring'].map((t) => clusterLimit(t as never, t === 'ring' ? 4 : 3).minBusbwGBs)).toEqual([21.875, 21.875, 10, 10]);
    expect(clusterLimit('ring', 4).source).toMatch(/sets none for a direct ring of 4 or more/);
    expect(clusterLimit('triangle', 3).source).toMatch(/spark_cluster_setup\.py\) for the 3-node ring/);
  });

  it('the environment of each topology: subnet-aware routing everywhere, CROSS_NIC on the mesh, ALGO=Ring on a ring', () => {
    expect(clusterEnv('pair')).toEqual({ NCCL_DEBUG: 'INFO', NCCL_IB_SUBNET_AWARE_ROUTING: '1' });
    expect(clusterEnv('triangle')).toMatchObject({ NCCL_CROSS_NIC: '1', NCCL_NET_PLUGIN: 'none' });
    expect(clusterEnv('triangle')['NCCL_ALGO']).toBeUndefined();
    expect(clusterEnv('ring')).toMatchObject({ NCCL_ALGO: 'Ring', NCCL_IB_MERGE_NICS: '0', NCCL_NET_PLUGIN: 'none', NCCL_IB_SUBNET_AWARE_ROUTING: '1' });
  });

  it('one app context per node, each with its own NCCL_IB_HCA, joined by " : "', () => {
    const c = clusterCommand(pairRanks, clusterEnv('pair'));
    expect(c.startsWith('mpirun -np 1 -H spark-a:1 -x LD_LIBRARY_PATH -x NCCL_IB_HCA=rocep1s0f1,roceP2p1s0f1 ')).toBe(true);
    expect(c.split(' : ')).toHaveLength(2);
    expect(c.match(/all_gather_perf -b 16G -e 16G -f 2/g)).toHaveLength(2);
  });

  it('a host or device name that is not a plain word never reaches the command line', () => {
    expect(rankProblem({ node: 'x', host: 'a;reboot', devices: ['d'] })).toMatch(/not a plain host name/);
    expect(rankProblem({ node: 'x', host: 'a', devices: ['roce$(id)'] })).toMatch(/RoCE device named "roce\$\(id\)"/);
    expect(rankProblem({ node: 'x', host: 'a', devices: [] })).toMatch(/no cabled port that is up/);
    expect(rankProblem(pairRanks[0]!)).toBeNull();
  });

  it('the recorded table gives its figure, but without NCCL_DEBUG lines nothing shows the ranks used IB: not held to the limit', () => {
    const r = clusterCheckRecordOf(line({ stdout: recorded }))!;
    expect(r.busbwGBs).toBe(21.4033);
    expect(r.problem).toBe("spark-a's rank used network unknown instead of IB");
    const t = clusterCheckText(r);
    expect(t.met).toBeNull();
    expect(t.text).toMatch(/bus bandwidth 21\.403 GB\/s \(171\.226 Gb\/s\), not held to its limit: spark-a's rank used network unknown/);
  });

  it('a failed launch, a stopped run and a figure below the limit, each in words', () => {
    const failed = clusterCheckRecordOf(
      line({
        exitCode: 1,
        stderr:
          "spark-a:1:1 [0] misc/ibvwrap.cc:216 NCCL WARN Call to ibv_modify_qp failed with 110 (Connection timed out)\nspark-a: Test NCCL failure common.cu:1279 'x / '\n",
      }),
    )!;
    expect(failed.problem).toBe('all_gather_perf gave no result (exit 1): Call to ibv_modify_qp failed with 110 (Connection timed out)');
    expect(clusterCheckText(failed).text).toMatch(/gave no figure: .*; the cables' own verdicts stand$/);
    // What a node printed is untrusted: a control byte in NCCL's warning reaches the sentence escaped.
    const hostile = clusterCheckRecordOf(line({ exitCode: 1, stderr: 'x NCCL WARN \u001b[2Jgone\u0007\n' }))!;
    expect(hostile.problem).toBe('all_gather_perf gave no result (exit 1): \\x1b[2Jgone\\x07');
    const stopped = clusterCheckRecordOf(line({ exitCode: null, stopped: "stopped: spark-a's cable was decided FAIL while it ran" }))!;
    expect([stopped.busbwGBs, stopped.problem]).toEqual([null, "stopped: spark-a's cable was decided FAIL while it ran"]);
    const low = clusterCheckText({ ...failed, busbwGBs: 13.9, problem: null });
    expect([low.met, low.text]).toEqual([false, expect.stringMatching(/13\.9 GB\/s \(111\.2 Gb\/s\), below at least 21\.875 GB\/s .*: missed/)]);
  });

  it('a line that is not a cluster check is no check, and a record without one has none in its result', () => {
    expect(clusterCheckRecordOf({ type: 'cluster-check' })).toBeNull();
    const record = passRecord();
    expect('clusterCheck' in resultOf(record)).toBe(false);
    const checked = resultOf({ ...record, clusterCheck: clusterCheckRecordOf(line({ stdout: recorded }))! }).clusterCheck!;
    expect([checked.topology, checked.busbwGBs, checked.minBusbwGBs, checked.met]).toEqual(['pair', 21.4033, 21.875, null]);
  });
});
