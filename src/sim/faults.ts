// Faults injected on top of any scenario, written `kind@<seconds>s[+<duration>s][:node]`, times since the lab was created.
import { UsageError } from '../domain/errors.js';

export type FaultKind = 'ssh-drop' | 'node-reboot' | 'garbage-output';

export interface Fault {
  kind: FaultKind;
  atS: number;
  durationS: number; // ssh-drop: unreachable time; node-reboot: time until the node answers again; garbage: unused
  node: string | null; // null = the default node for the kind (both for ssh-drop, the second node otherwise)
  text: string;
}

const DEFAULT_DURATION: Record<FaultKind, number> = { 'ssh-drop': 20, 'node-reboot': 90, 'garbage-output': 0 };

// Parse one fault spec; an unknown kind or a bad time is a usage error that lists the accepted forms.
export function parseFault(text: string): Fault {
  const m = /^(ssh-drop|node-reboot|garbage-output)@(\d+(?:\.\d+)?)s(?:\+(\d+(?:\.\d+)?)s)?(?::([A-Za-z0-9_.-]+))?$/.exec(text.trim());
  if (!m) {
    throw new UsageError(`bad fault "${text}": expected ssh-drop@900s, node-reboot@1200s or garbage-output@300s (optional +<duration>s and :<node>)`);
  }
  const kind = m[1] as FaultKind;
  return {
    kind,
    atS: Number(m[2]),
    durationS: m[3] !== undefined ? Number(m[3]) : DEFAULT_DURATION[kind],
    node: m[4] ?? null,
    text,
  };
}
