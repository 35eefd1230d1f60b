import { UsageError } from '../domain/errors.js';

// Placeholder values come from the nodes (device names, addresses) or the protocol (numbers); all are checked
// against a strict pattern before they reach a command line, so a hostile value cannot add shell syntax.
const SAFE_VALUE = /^[A-Za-z0-9_.:,@/-]*$/;

// Expand `{name}` placeholders of a protocol command template; an unknown placeholder or an unsafe value is refused.
export function fillTemplate(template: string, values: Record<string, string | number>, where: string): string {
  const out = template.replace(/\{([A-Za-z][A-Za-z0-9]*)\}/g, (_m, key: string) => {
    const v = values[key];
    if (v === undefined) throw new UsageError(`${where}: unknown placeholder {${key}} in "${template}"`);
    const s = String(v);
    if (!SAFE_VALUE.test(s)) throw new UsageError(`${where}: refusing value ${JSON.stringify(s)} for {${key}}`);
    return s;
  });
  return out.replace(/\s+/g, ' ').trim();
}
