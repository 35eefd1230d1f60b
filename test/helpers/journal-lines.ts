// A journal's lines as a journal written before the hash chain looks: no `prev` on any line, and no `chain` mark in
// its run-start (runs since the mark say they were written chained; one that says so and has no chain is stripped).
export function asBeforeTheChain(lines: readonly string[]): string[] {
  return lines.map((l) => {
    const o = JSON.parse(l) as Record<string, unknown>;
    delete o['prev'];
    if (o['type'] === 'run-start') delete o['chain'];
    return JSON.stringify(o);
  });
}
