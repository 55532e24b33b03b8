import type { Clock } from "../ports/clock.js";

/** The time a `ManualClock` starts at unless told otherwise. */
const MANUAL_CLOCK_START = new Date("2025-01-01T00:00:00.000Z");

/** A `Clock` that moves only when told to. `now()` answers a fresh `Date` each time. */
export class ManualClock implements Clock {
  #ms: number;

  constructor(start: Date = MANUAL_CLOCK_START) {
    this.#ms = start.getTime();
  }

  now(): Date {
    return new Date(this.#ms);
  }

  set(date: Date): void {
    this.#ms = date.getTime();
  }

  /** Moves the clock `ms` milliseconds on (back when negative) and answers the new time. */
  advance(ms: number): Date {
    this.#ms += ms;
    return this.now();
  }
}
