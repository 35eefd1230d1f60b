// PASS/MARGINAL/FAIL judge the cable; ERROR/ABORTED mean the run could not judge it (OpenHTF keeps them apart too).
export type Outcome = 'PASS' | 'MARGINAL' | 'FAIL' | 'ERROR' | 'ABORTED';

// Grade of one measurement against its limit.
export type Grade = 'PASS' | 'MARGINAL' | 'FAIL';

export const CABLE_VERDICTS: readonly Outcome[] = ['PASS', 'MARGINAL', 'FAIL'];

// Why a run got its outcome: the rule, and where and what was seen, so a reader can check it.
export interface Reason {
  rule: string;
  message: string;
  grade?: Grade;
  node?: string;
  phase?: string;
  lane?: number;
  rail?: number;
  value?: number | string;
  unit?: string;
  limit?: string;
  atS?: number;
  advice?: string;
}

// Worse outcomes win when several reasons apply.
export function worstGrade(grades: Iterable<Grade>): Grade {
  let worst: Grade = 'PASS';
  for (const g of grades) {
    if (g === 'FAIL') return 'FAIL';
    if (g === 'MARGINAL') worst = 'MARGINAL';
  }
  return worst;
}
