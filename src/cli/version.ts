import { CABLEQUAL_VERSION, JOURNAL_FORMAT_VERSION } from '../domain/version.js';
import { RULES_VERSION } from '../rules/versions.js';

// What `cablequal --version` prints: the package version (what every document it writes records), the rules version
// its runs are graded with and the journal format it writes.
export function versionText(): string {
  return `cablequal ${CABLEQUAL_VERSION}\nrules version ${RULES_VERSION}\njournal format ${JOURNAL_FORMAT_VERSION}\n`;
}
