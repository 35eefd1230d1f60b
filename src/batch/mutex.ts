// A FIFO async mutex: two cables sharing a node take turns for their benchmarks.
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

// One mutex per node name; a run that touches several nodes takes them in name order (no deadlock).
export class NodeMutexes {
  private readonly locks = new Map<string, Mutex>();

  async lockAll(nodes: string[]): Promise<() => void> {
    const releases: (() => void)[] = [];
    for (const n of [...new Set(nodes)].sort()) {
      let m = this.locks.get(n);
      if (!m) this.locks.set(n, (m = new Mutex()));
      releases.push(await m.lock());
    }
    return () => releases.reverse().forEach((r) => r());
  }
}
