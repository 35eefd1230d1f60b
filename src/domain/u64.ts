// Counters are u64 on the NIC; JavaScript numbers lose precision above 2^53, so counters stay bigint.
export type U64 = bigint;

const U64_MAX = (1n << 64n) - 1n;
const SAFE = BigInt(Number.MAX_SAFE_INTEGER);

// Parse a decimal u64 exactly; null when the text is not a u64 (negative, fraction, overflow, garbage).
export function parseU64(text: string): U64 | null {
  if (!/^\d{1,20}$/.test(text)) return null;
  const v = BigInt(text);
  return v > U64_MAX ? null : v;
}

// JSON has no bigint: numbers up to 2^53, decimal strings above (the documented `parse` output contract).
export function u64ToJson(v: U64): number | string {
  return v <= SAFE && v >= -SAFE ? Number(v) : v.toString();
}

// JSON.stringify replacer that applies u64ToJson to every bigint in a structure.
export function bigintReplacer(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? u64ToJson(value) : value;
}
