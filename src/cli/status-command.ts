import { statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { UsageError } from '../domain/errors.js';
import { printable } from '../domain/text.js';
import { readInputText } from '../io/read-input.js';
import { findRunDirs } from '../report/run-dirs.js';
import { LIVE_FILE, type LiveState } from '../run/live-state.js';
import { EXIT } from './exit-codes.js';
import type { CliIo } from './io.js';

// A live run rewrites live.json at least every 5 s; this much silence means it is not running normally.
export const LIVE_STALE_S = 60;

export type LiveVerdict = 'running' | 'not-updating' | 'died' | 'unknown';

export interface LiveRun extends LiveState {
  dir: string;
  verdict: LiveVerdict;
  why: string;
  ageS: number; // since the last rewrite of live.json
  outcome: string | null; // record.json's outcome, when one was written (a killed run graded since)
}

// Is process `pid` there? (EPERM: there, owned by someone else.)
export function pidAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

// How alive a run is: on this controller by its pid (and live.json's age); on another one only by live.json's age.
export function judgeLive(s: LiveState, now: number, here = hostname(), alive = pidAlive): { verdict: LiveVerdict; why: string; ageS: number } {
  const ageS = Math.max(0, Math.round((now - Date.parse(s.updatedAt)) / 1000));
  if (s.controller === here) {
    if (!alive(s.pid)) return { verdict: 'died', why: `pid ${s.pid} is gone and the run never ended (no run-end)`, ageS };
    if (ageS > LIVE_STALE_S)
      return { verdict: 'not-updating', why: `pid ${s.pid} exists but live.json is ${ageS} s old (a hung run, or the pid was reused)`, ageS };
    return { verdict: 'running', why: `pid ${s.pid}`, ageS };
  }
  if (ageS > LIVE_STALE_S)
    return { verdict: 'unknown', why: `on controller ${s.controller}; no news for ${ageS} s (its pid cannot be checked from here)`, ageS };
  return { verdict: 'running', why: `pid ${s.pid} on controller ${s.controller}`, ageS };
}

function readLive(dir: string): LiveState | null {
  try {
    const v = JSON.parse(readInputText(join(dir, LIVE_FILE), 'liveState')) as Partial<LiveState>;
    if (v?.schema !== 'cablequal.live/1' || typeof v.runId !== 'string' || typeof v.pid !== 'number' || typeof v.updatedAt !== 'string') return null;
    return v as LiveState;
  } catch {
    return null;
  }
}

function outcomeIn(dir: string): string | null {
  try {
    const r = JSON.parse(readInputText(join(dir, 'record.json'), 'record')) as { outcome?: unknown };
    return typeof r.outcome === 'string' ? r.outcome : null;
  } catch {
    return null;
  }
}

// The runs under `reportsDir` that keep a live.json: going on, or died without a run-end.
export function liveRuns(reportsDir: string, now = Date.now()): LiveRun[] {
  const out: LiveRun[] = [];
  for (const dir of findRunDirs(reportsDir)) {
    const s = readLive(dir);
    if (!s) continue;
    out.push({ ...s, dir, ...judgeLive(s, now), outcome: outcomeIn(dir) });
  }
  return out.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

function mmss(s: number | null): string {
  if (s === null || !Number.isFinite(s)) return '-';
  const t = Math.max(0, Math.round(s));
  const h = Math.floor(t / 3600);
  const m = Math.floor((t % 3600) / 60);
  const sec = t % 60;
  return `${h ? `${h}:${String(m).padStart(2, '0')}` : m}:${String(sec).padStart(2, '0')}`;
}

// `cablequal status [--out reports]`: the live runs and the dead ones that never ended, one block each.
export async function statusCommand(args: { out: string; json: boolean }, io: CliIo): Promise<number> {
  const dir = resolve(io.cwd, args.out);
  const st = statSync(dir, { throwIfNoEntry: false });
  if (!st?.isDirectory()) throw new UsageError(`--out ${args.out}: no such reports directory`);
  const runs = liveRuns(dir);
  if (args.json) {
    io.stdout(
      `${JSON.stringify(runs.map((r) => ({ runId: r.runId, verdict: r.verdict, why: r.why, phase: r.phase, elapsedS: r.elapsedS, remainingS: r.remainingS, phaseRemainingS: r.phaseRemainingS ?? null, nodes: r.nodes.map((n) => n.name), pid: r.pid, controller: r.controller, runDir: r.dir, updatedAt: r.updatedAt, outcome: r.outcome })))}\n`,
    );
    return EXIT.ok;
  }
  if (runs.length === 0) {
    io.stdout(`no live runs under ${dir}\n`);
    return EXIT.ok;
  }
  for (const r of runs) {
    const nodes = r.nodes.map((n) => `${n.name}${n.cage === 'auto' ? '' : `:${n.cage}`}`).join(',');
    const head = r.verdict === 'running' ? 'RUNNING' : r.verdict === 'died' ? 'DIED' : r.verdict === 'not-updating' ? 'NOT UPDATING' : 'UNKNOWN';
    io.stdout(printable(`${head}  ${r.runId}${r.label ? ` "${r.label}"` : ''}${r.simulated ? ' (simulated lab)' : ''}`) + '\n');
    io.stdout(
      printable(
        `  phase ${r.phase}, elapsed ${mmss(r.elapsedS)}, remaining ${mmss(r.remainingS)}${r.phaseRemainingS != null ? ` (phase ${mmss(r.phaseRemainingS)})` : ''} (as of ${r.ageS} s ago); nodes ${nodes}; ${r.why}`,
      ) + '\n',
    );
    io.stdout(`  run directory: ${relative(io.cwd, r.dir) || '.'}\n`);
    if (r.verdict === 'died') {
      const graded = r.outcome ? `graded ${r.outcome}` : `grade it: cablequal grade ${relative(io.cwd, r.dir)}`;
      const nodes = r.simulated ? 'simulated nodes: nothing left on them' : `free its nodes: cablequal cleanup --nodes ${r.nodes.map((n) => n.host).join(',')}`;
      io.stdout(printable(`  ${graded}; ${nodes}`) + '\n');
    }
    if (r.verdict === 'running') io.stdout(`  follow it: tail -f ${join(relative(io.cwd, r.dir), 'run.log')}\n`);
  }
  return EXIT.ok;
}
