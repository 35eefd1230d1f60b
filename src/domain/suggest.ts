// "Did you mean": the one way cablequal guesses what a mistyped word meant (an option, a command, a scenario, a
// protocol, a parse kind, a cage), by edit distance. A guess is offered only when it is close; otherwise the caller
// says where the list is, never the whole list instead of a guess.

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of two neighbours cost 1 each
// (`qsf56` -> `qsfp56` is 1, `manifst` -> `manifest` is 1, `verfy` -> `verify` is 1, `smi` -> `sim` is 1).
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

// The farthest a guess may be from what was typed: 1 edit for a short word, up to 3 for a long one (a third of it).
function tolerance(typed: string): number {
  return Math.max(1, Math.min(3, Math.floor(typed.length / 3)));
}

// The candidate nearest to `typed` (case aside) within the tolerance, the first listed on a tie; null when none is
// close or it is what was typed. Words far longer than any candidate are not compared at all (untrusted text: the cost stays bounded).
export function closestWord(typed: string, candidates: Iterable<string>): string | null {
  const t = typed.toLowerCase();
  if (t.length === 0 || t.length > 100) return null;
  let best: { word: string; d: number } | null = null;
  for (const c of candidates) {
    const d = editDistance(t, c.toLowerCase());
    if (d <= tolerance(t) && d < (best?.d ?? Infinity)) best = { word: c, d };
  }
  return best && best.word !== typed ? best.word : null;
}

// `: did you mean <word>?` (with its prefix, e.g. `--`), or '' when nothing is close: appended to a message.
export function didYouMean(typed: string, candidates: Iterable<string>, prefix = ''): string {
  const w = closestWord(typed, candidates);
  return w === null ? '' : `: did you mean ${prefix}${w}?`;
}
