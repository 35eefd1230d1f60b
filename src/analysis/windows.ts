// Sliding windows in seconds: per-lane error counts over the last windowS, and how long a condition has held.

interface Interval {
  endMs: number;
  seconds: number;
  counts: number[];
}

// Counts of the intervals that ended within the last windowS seconds (at least windowS long once full: an interval is
// dropped only when the rest still covers the window). Intervals are added in time order.
export class WindowSum {
  private readonly q: Interval[] = [];
  private head = 0;
  seconds = 0;
  readonly counts: number[] = [];

  constructor(readonly windowS: number) {}

  add(endMs: number, seconds: number, counts: readonly number[]): void {
    this.q.push({ endMs, seconds, counts: [...counts] });
    this.seconds += seconds;
    for (let i = 0; i < counts.length; i++) this.counts[i] = (this.counts[i] ?? 0) + counts[i]!;
    while (this.head < this.q.length - 1 && this.seconds - this.q[this.head]!.seconds >= this.windowS) {
      const old = this.q[this.head++]!;
      this.seconds -= old.seconds;
      for (let i = 0; i < old.counts.length; i++) this.counts[i]! -= old.counts[i]!;
    }
    if (this.head > 1024 && this.head * 2 > this.q.length) {
      this.q.splice(0, this.head);
      this.head = 0;
    }
  }

  // The window covers windowS seconds (less than half a millisecond short counts as covered).
  get full(): boolean {
    return this.seconds >= this.windowS - 5e-4;
  }

  reset(): void {
    this.q.length = 0;
    this.head = 0;
    this.seconds = 0;
    this.counts.length = 0;
  }
}

// The best value seen over the last holdS seconds of ticks: what a condition has held for the whole hold. `worse(a, b)`
// says a is worse than b; the result is the least bad value in the hold, so "held below the line for holdS" is
// `held()` below the line. Undefined until values cover holdS since the last reset.
export class Held<T> {
  private readonly q: { tMs: number; v: T }[] = [];
  private head = 0;
  private sinceMs: number | null = null;

  constructor(
    readonly holdS: number,
    private readonly worse: (a: T, b: T) => boolean,
  ) {}

  push(tMs: number, v: T): T | undefined {
    this.sinceMs ??= tMs;
    // Keep a queue whose values get worse towards the back: a new value drops the worse ones behind it.
    while (this.q.length > this.head && !this.worse(v, this.q[this.q.length - 1]!.v)) this.q.pop();
    this.q.push({ tMs, v });
    const from = tMs - this.holdS * 1000;
    while (this.q[this.head]!.tMs < from) this.head++;
    if (this.head > 1024 && this.head * 2 > this.q.length) {
      this.q.splice(0, this.head);
      this.head = 0;
    }
    return tMs - this.sinceMs >= this.holdS * 1000 - 0.5 ? this.q[this.head]!.v : undefined;
  }

  reset(): void {
    this.q.length = 0;
    this.head = 0;
    this.sinceMs = null;
  }
}
