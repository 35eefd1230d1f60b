// Taking turns: a FIFO async mutex. Two cables sharing a node take turns for their benchmarks (a batch with a node in
// two pairs, src/batch/mutex.ts; two cables between the same nodes, src/run/both-cages.ts).
export class Mutex {
  private tail: Promise<void> = Promise.resolve();

  // Resolves with the release function once every earlier holder has released.
  lock(): Promise<() => void> {
    let release!: () => void;
    const next = new Promise<void>((r) => (release = r));
    const ready = this.tail.then(() => release);
    this.tail = this.tail.then(() => next);
    return ready;
  }
}
