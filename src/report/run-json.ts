// The one JSON of a finished cable run, as `run --json` prints it, each element of `run --port both --json`'s
// `cables` (and of `run --cluster`), and `grade --json`: the result (src/domain/result.ts), the reasons in their one
// shape, where the documents are. docs/outputs.md documents every field.
import type { RunRecord } from '../domain/record.js';
import { reasonJson, type ReasonJson, type RunResult } from '../domain/result.js';
import { resultOfRecord } from '../rules/result.js';

export interface CableJson {
  cage?: number; // run --port both: the cage this cable sat in
  outcome: RunRecord['outcome'];
  kind: RunResult['kind'];
  role: RunResult['role'];
  qualification: boolean; // the run is a qualification (not a set-up check): its verdict may qualify the cable
  serial: string | null;
  cable: { vendor: string | null; pn: string | null; serial: string | null };
  reasons: ReasonJson[];
  result: RunResult;
  headline: RunRecord['headline'] | null; // what the loaded soak proved per receiver and lane (null: no soak graded)
  rulesVersion: number | null;
  protocol: string;
  shortOfQualification?: string[];
  decidedAtS: number | null;
  simulated: boolean;
  runDir: string;
  certificate: string | null; // certificate.html of a judged qualification
  document: string | null; // the HTML document written (certificate, set-up check or run report)
}

// Where a run's files are (null: not written).
export interface RunPlaceJson {
  runDir: string;
  certificate: string | null;
  document: string | null;
  cage?: number;
}

export function cableJson(record: RunRecord, place: RunPlaceJson): CableJson {
  const result = resultOfRecord(record);
  return {
    ...(place.cage !== undefined ? { cage: place.cage } : {}),
    outcome: record.outcome,
    kind: result.kind,
    role: result.role,
    qualification: result.kind === 'qualification',
    serial: record.cable.serial,
    cable: { vendor: record.cable.vendor, pn: record.cable.partNumber, serial: record.cable.serial },
    reasons: record.reasons.map(reasonJson),
    result,
    headline: result.headlinePhase === null ? null : (record.headline ?? null),
    rulesVersion: record.rules?.version ?? null,
    protocol: record.protocol.name,
    ...(record.shortOfQualification ? { shortOfQualification: record.shortOfQualification } : {}),
    decidedAtS: record.decidedAtS,
    simulated: record.simulated,
    runDir: place.runDir,
    certificate: place.certificate,
    document: place.document,
  };
}
