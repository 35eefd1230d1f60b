// Faults injected on top of any scenario, written `kind@<seconds>s[+<duration>s][:node]`, times since the lab was created.
import { UsageError } from '../domain/errors.js';

// ssh-drop: the node cannot be reached for a while; node-reboot: it reboots; garbage-output: one `ethtool -S` answer is
// cut short with binary noise; link-load-stop: the node's ib_write_bw clients over the cable stop printing and exit;
// gpu-load-stop: its GPU load process exits and the GPU falls idle; counter-reset: its *_phy and FEC counters go back to
// 0 (as `mlxlink --pc` does), the link staying up; uncorrectable: its receiver of the lab's (first) cable counts one
// uncorrectable RS codeword (a post-FEC error: a certain FAIL in any phase; one alone does not trip the PCS's hi_ber);
// link-drop: the (first) cable's link goes down for the duration (default 5 s) and trains again, `ethtool <if>`
// saying why meanwhile (SIM_LINK_DOWN_REASONS.flap); phy-recovery: its PHY recovers the link once without it
// going down (total_success_recovery_phy counts one, on a node whose kernel has the counter).
const FAULT_KINDS = [
  'ssh-drop',
  'node-reboot',
  'garbage-output',
  'link-load-stop',
  'gpu-load-stop',
  'counter-reset',
  'uncorrectable',
  'link-drop',
  'phy-recovery',
] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

export interface Fault {
  kind: FaultKind;
  atS: number;
  durationS: number; // ssh-drop: unreachable time; node-reboot: time until the node answers again; the others: unused
  node: string | null; // null = the default node for the kind (both for ssh-drop, the second node otherwise)
  text: string;
}

const DEFAULT_DURATION: Record<FaultKind, number> = {
  'ssh-drop': 20,
  'node-reboot': 90,
  'garbage-output': 0,
  'link-load-stop': 0,
  'gpu-load-stop': 0,
  'counter-reset': 0,
  uncorrectable: 0,
  'link-drop': 5,
  'phy-recovery': 0,
};

const FORM = new RegExp(`^(${FAULT_KINDS.join('|')})@(\\d+(?:\\.\\d+)?)s(?:\\+(\\d+(?:\\.\\d+)?)s)?(?::([A-Za-z0-9_.-]+))?$`);

// Parse one fault spec; an unknown kind or a bad time is a usage error that lists the accepted forms.
export function parseFault(text: string): Fault {
  const m = FORM.exec(text.trim());
  if (!m) {
    throw new UsageError(
      `bad fault "${text}": expected ssh-drop@900s, node-reboot@1200s, garbage-output@300s, link-load-stop@700s, gpu-load-stop@1000s, counter-reset@900s, uncorrectable@60s, link-drop@60s or phy-recovery@600s (optional +<duration>s and :<node>)`,
    );
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
