// The node's clock as the sampler reads it each tick: bash's $EPOCHREALTIME, or `date +%s.%N` / `date +%s%N`.

// Node time → epoch milliseconds with microsecond resolution: `1764480000.123456` from bash's $EPOCHREALTIME (a
// comma in locales that write one), `1764480000.123456789` from `date +%s.%N`, or the nanoseconds of `date +%s%N`.
export function parseNodeTime(text: string): number {
  const frac = /^(\d{9,11})[.,](\d{1,9})\n?$/.exec(text);
  if (frac) return (Number(frac[1]) * 1e6 + Number(frac[2]!.padEnd(9, '0').slice(0, 6))) / 1000;
  const ns = /^(\d{16,20})\n?$/.exec(text);
  if (ns) return Number(BigInt(ns[1]!) / 1000n) / 1000;
  throw new Error(`node time: expected epoch seconds.fraction ($EPOCHREALTIME or date +%s.%N), got ${JSON.stringify(text.slice(0, 40))}`);
}
