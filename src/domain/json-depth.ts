// How deep arrays and objects nest in a parsed JSON value, walked without recursion: a value nested 100,000 levels
// deep parses (V8's JSON.parse is iterative), but JSON.stringify and every recursive reader overflow the stack on it.
export function nestingExceeds(v: unknown, max: number): boolean {
  const stack: Array<[unknown, number]> = [[v, 1]];
  while (stack.length) {
    const [x, d] = stack.pop()!;
    if (x === null || typeof x !== 'object') continue;
    if (d > max) return true;
    for (const c of Array.isArray(x) ? x : Object.values(x)) if (c !== null && typeof c === 'object') stack.push([c, d + 1]);
  }
  return false;
}

// Where a parsed JSON value holds a number that is not finite (`1e999` parses as Infinity), as a path
// ("body.reasons[0].value"), or null. JSON cannot write one, so no document cablequal wrote holds one; walked
// without recursion, after nestingExceeds has bounded the depth.
export function nonFiniteNumberAt(v: unknown): string | null {
  const stack: Array<[unknown, string]> = [[v, '']];
  while (stack.length) {
    const [x, at] = stack.pop()!;
    if (typeof x === 'number' && !Number.isFinite(x)) return at || '(the document)';
    if (x === null || typeof x !== 'object') continue;
    if (Array.isArray(x)) x.forEach((c, i) => stack.push([c, `${at}[${i}]`]));
    else for (const [k, c] of Object.entries(x)) stack.push([c, at ? `${at}.${k}` : k]);
  }
  return null;
}
