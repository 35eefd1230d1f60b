import { Mutex } from '../run/turns.js';

export { Mutex };

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

type Waiter = { exclusive: boolean; grant: () => void };

// A readers-writer lock in arrival order: any number of shared holders at once, or one exclusive holder alone; a
// waiting exclusive request goes before shared requests that arrive after it (a reboot waits for the running cable,
// not for every cable after it).
export class SharedLock {
  private shared = 0;
  private exclusive = false;
  private readonly queue: Waiter[] = [];

  acquire(exclusive: boolean): Promise<() => void> {
    return new Promise((resolve) => {
      this.queue.push({ exclusive, grant: () => resolve(this.releaser(exclusive)) });
      this.pump();
    });
  }

  private releaser(exclusive: boolean): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      if (exclusive) this.exclusive = false;
      else this.shared--;
      this.pump();
    };
  }

  private pump(): void {
    while (this.queue.length && !this.exclusive) {
      const head = this.queue[0]!;
      if (head.exclusive && this.shared > 0) return;
      this.queue.shift();
      if (head.exclusive) this.exclusive = true;
      else this.shared++;
      head.grant();
      if (head.exclusive) return;
    }
  }
}

// Per node: cable runs use a node together (shared); bringing a node into a measurable state (a reboot) needs it alone.
export class NodeUse {
  private readonly locks = new Map<string, SharedLock>();

  // Take the nodes in name order (no deadlock); resolves with one release function for all of them.
  async take(nodes: string[], exclusive: boolean): Promise<() => void> {
    const releases: (() => void)[] = [];
    for (const n of [...new Set(nodes)].sort()) {
      let l = this.locks.get(n);
      if (!l) this.locks.set(n, (l = new SharedLock()));
      releases.push(await l.acquire(exclusive));
    }
    return () => releases.reverse().forEach((r) => r());
  }
}
