import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';
import { speedProblem } from '../domain/speed.js';

// Real time sped up K times, for `sim serve`: a client connected over SSH sees a 75-minute procedure in 75/K minutes.
export class ScaledClock implements Clock {
  private readonly t0: number;
  constructor(
    readonly speed: number,
    private readonly base: Clock = systemClock,
  ) {
    const problem = speedProblem(speed); // the one bound of --speed
    if (problem) throw new RangeError(`speed: ${problem}, got ${speed}`);
    this.t0 = base.now();
  }

  now(): number {
    return this.t0 + (this.base.now() - this.t0) * this.speed;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.base.sleep(ms / this.speed, signal);
  }
}
