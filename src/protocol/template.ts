// Expanding command templates from a protocol; values are names and numbers only, so nothing can inject shell syntax.
import { UsageError } from '../domain/errors.js';

const SAFE_VALUE = /^[A-Za-z0-9_.:,/@=+-]*$/;

// Fill {placeholders}; an unknown placeholder or an unsafe value is refused, and the gap left by an empty value collapses.
export function renderCommand(template: string, values: Record<string, string | number>): string {
  const out = template.replace(/\{([^}]*)\}/g, (_m, key: string) => {
    const v = values[key];
    if (v === undefined) throw new UsageError(`command template needs {${key}}: ${template}`);
    const s = String(v);
    if (!SAFE_VALUE.test(s)) throw new UsageError(`refusing value ${JSON.stringify(s)} for {${key}}: only names and numbers are allowed`);
    return s;
  });
  return out.replace(/\s+/g, ' ').trim();
}
