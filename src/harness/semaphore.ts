/** A counting semaphore: at most `n` holders at once, waiters served in arrival order. */
export class Semaphore {
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly n: number) {}

  /** Resolves with a release function once a slot is free. Call it exactly once. */
  async acquire(): Promise<() => void> {
    if (this.active >= this.n) await new Promise<void>((r) => this.waiting.push(r));
    else this.active++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next)
        next(); // the slot passes straight to the next waiter
      else this.active--;
    };
  }

  get inUse(): number {
    return this.active;
  }
}
