import type { Outcome } from '../domain/outcome.js';

// Exit codes are part of the interface: scripts and lab CI read them.
// `unpinned` (5): verify found the certificate consistent, but could check its signature only against the key the
// certificate itself carries (no trusted lab key given or configured): not a proof of who signed it.
export const EXIT = { ok: 0, fail: 1, usage: 2, error: 3, aborted: 4, unpinned: 5, internal: 70, interrupted: 130 } as const;

// Map a run outcome to the process exit code.
export function exitCodeFor(outcome: Outcome): number {
  switch (outcome) {
    case 'PASS':
    case 'MARGINAL':
      return EXIT.ok;
    case 'FAIL':
      return EXIT.fail;
    case 'ERROR':
      return EXIT.error;
    case 'ABORTED':
      return EXIT.aborted;
  }
}
