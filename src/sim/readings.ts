// The simulated lab's answers to extra readings (src/probes/readings.ts), by reading id: what the node would print for
// the reading's command, from the lab's model (generated, never presented as recorded). A reading without an entry here
// is answered by running its command on the simulated node, as a real node would (`ethtool -m` is modelled, so a reading
// over it needs none); one whose tool the lab does not model answers like a missing binary.
import type { LabCore } from './lab-core.js';

// What an answer is told: the lab and the node asked.
export interface SimReadingAt {
  core: LabCore;
  node: string;
}

// The stdout of a reading's command on the simulated node.
export type SimReadingAnswer = (at: SimReadingAt) => string;

// Reading id -> the lab's answer. None yet: the registered readings' commands are the lab's own tools.
const ANSWERS = new Map<string, SimReadingAnswer>();

// The lab's answer to a reading, or undefined (then its command runs on the simulated node).
export function simReadingAnswer(id: string): SimReadingAnswer | undefined {
  return ANSWERS.get(id);
}

/** Answer a reading from the model (tests register theirs for one run); returns the function that removes it. @internal */
export function registerSimReading(id: string, answer: SimReadingAnswer): () => void {
  if (ANSWERS.has(id)) throw new Error(`the simulated lab already answers reading ${id}`);
  ANSWERS.set(id, answer);
  return () => {
    if (ANSWERS.get(id) === answer) ANSWERS.delete(id);
  };
}
