// Sliding windows in seconds: per-lane error counts over the last windowS, and how long a condition has held.
// Both keep their entries in flat ring buffers: a 10 Hz soak pushes tens of thousands of ticks per receiver.

const NONE: readonly number[] = [];
const PAIR: number[] = [0];

// A ring of numbers that grows when full (oldest first).
class Ring {
  private buf = new Float64Array(64);
  private head = 0;
  length = 0;

  constructor(private readonly width = 1) {
    this.buf = new Float64Array(64 * width);
  }

  // Append one entry of `width` numbers: `first`, then `rest`.
  push(first: number, rest: readonly number[] = NONE): void {
    const cap = this.buf.length / this.width;
    if (this.length === cap) {
      const next = new Float64Array(this.buf.length * 2);
      for (let i = 0; i < this.length; i++)
        next.set(this.buf.subarray(((this.head + i) % cap) * this.width, (((this.head + i) % cap) + 1) * this.width), i * this.width);
      this.buf = next;
      this.head = 0;
    }
    const at = ((this.head + this.length) % (this.buf.length / this.width)) * this.width;
    this.buf[at] = first;
    for (let j = 1; j < this.width; j++) this.buf[at + j] = rest[j - 1] ?? 0;
    this.length++;
  }

  // Append an entry of two numbers (without an array for the second).
  pushPair(a: number, b: number): void {
    PAIR[0] = b;
    this.push(a, PAIR);
  }

  // Field j of the i-th entry from the oldest (i from the newest when `fromEnd`).
  get(i: number, j = 0, fromEnd = false): number {
    const cap = this.buf.length / this.width;
    const k = fromEnd ? this.length - 1 - i : i;
    return this.buf[((this.head + k) % cap) * this.width + j]!;
  }

  shift(): void {
    this.head = (this.head + 1) % (this.buf.length / this.width);
    this.length--;
  }

  pop(): void {
    this.length--;
  }

  clear(): void {
    this.head = 0;
    this.length = 0;
  }
}

// Counts of the intervals that ended within the last windowS seconds (at least windowS long once full: an interval is
// dropped only when the rest still covers the window). Intervals are added in time order, all with the same lane count.
export class WindowSum {
  private ring: Ring | null = null;
  private lanes = 0;
  seconds = 0;
  readonly counts: number[] = [];

  constructor(readonly windowS: number) {}

  add(_endMs: number, seconds: number, counts: readonly number[]): void {
    if (!this.ring || counts.length !== this.lanes) {
      this.lanes = counts.length;
      this.ring = new Ring(1 + this.lanes);
      this.seconds = 0;
      this.counts.length = 0;
    }
    this.ring.push(seconds, counts);
    this.seconds += seconds;
    for (let i = 0; i < counts.length; i++) this.counts[i] = (this.counts[i] ?? 0) + counts[i]!;
    while (this.ring.length > 1 && this.seconds - this.ring.get(0, 0) >= this.windowS) {
      this.seconds -= this.ring.get(0, 0);
      for (let i = 0; i < this.lanes; i++) this.counts[i]! -= this.ring.get(0, 1 + i);
      this.ring.shift();
    }
  }

  // The window covers windowS seconds (less than half a millisecond short counts as covered).
  get full(): boolean {
    return this.seconds >= this.windowS - 5e-4;
  }

  reset(): void {
    this.ring?.clear();
    this.seconds = 0;
    this.counts.length = 0;
  }
}

// The best value seen over the last holdS seconds of ticks: what a condition has held for the whole hold. `worse(a, b)`
// says a is worse than b; the result is the least bad value in the hold, so "held below the line for holdS" is
// `push()` below the line. Undefined until values cover holdS since the last reset.
export class Held {
  private readonly q = new Ring(2); // [tMs, value], values getting worse towards the newest
  private sinceMs: number | null = null;

  constructor(
    readonly holdS: number,
    private readonly worse: (a: number, b: number) => boolean,
  ) {}

  push(tMs: number, v: number): number | undefined {
    this.sinceMs ??= tMs;
    // A new value drops the entries behind it that are no better: they can never be the best of a later hold.
    while (this.q.length > 0 && !this.worse(v, this.q.get(0, 1, true))) this.q.pop();
    this.q.pushPair(tMs, v);
    const from = tMs - this.holdS * 1000;
    while (this.q.get(0, 0) < from) this.q.shift();
    return tMs - this.sinceMs >= this.holdS * 1000 - 0.5 ? this.q.get(0, 1) : undefined;
  }

  reset(): void {
    this.q.clear();
    this.sinceMs = null;
  }
}
