import type { Clock } from '../domain/clock.js';
import { systemClock } from '../domain/clock.js';

// Real time sped up K times, for `sim serve`: a client connected over SSH sees a 75-minute procedure in 75/K minutes.
export class ScaledClock implements Clock {
  private readonly t0: number;
  constructor(
    readonly speed: number,
    private readonly base: Clock = systemClock,
  ) {
    if (!(speed > 0) || !Number.isFinite(speed)) throw new RangeError(`speed must be a positive number, got ${speed}`);
    this.t0 = base.now();
  }

  now(): number {
    return this.t0 + (this.base.now() - this.t0) * this.speed;
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return this.base.sleep(ms / this.speed, signal);
  }
}
