import type { Clock } from '../domain/clock.js';
import type { EndView } from './cable-ends.js';

// While a batch polls for a cable swap, a node that cannot be reached is said at once, then every `everyMs`
// while it stays so, and once more when it answers again: unattended polling never goes silent on a dead node.
export function unreachableReporter(clock: Clock, say: (line: string) => void, prefix: string, everyMs = 60_000) {
  const lastSaid = new Map<string, number>();
  return (nodes: string[], ends: EndView[]): void => {
    ends.forEach((e, i) => {
      const node = nodes[i] ?? `node ${i + 1}`;
      if (e.unreachable) {
        const last = lastSaid.get(node);
        if (last === undefined || clock.now() - last >= everyMs) {
          lastSaid.set(node, clock.now());
          say(`${prefix}${node} is unreachable (${e.note ?? 'no answer'}); still polling for the cable`);
        }
      } else if (lastSaid.delete(node)) {
        say(`${prefix}${node} answers again`);
      }
    });
  };
}
