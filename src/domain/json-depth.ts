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
