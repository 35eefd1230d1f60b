// What a CLI command is given to reach the nodes `cablequal sim serve` serves: their names and the ssh config it wrote.
import type { SimServe } from '../../src/sim/serve.js';

export const servedNodeArgs = (s: Pick<SimServe, 'nodes' | 'files'>): string[] => [
  '--nodes',
  s.nodes.map((n) => n.name).join(','),
  '--ssh-config',
  s.files.config,
];
