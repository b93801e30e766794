/**
 * @file Which pattern each iteration of a scan's sweep uses, as runs of iterations: a loop
 * of a million iterations with one pattern takes one entry, not a million.
 */
export class Runs {
  /** Entries in the order the sweep visits iterations: each says "from `first` on, pattern `index`". */
  private readonly first: number[] = [];
  private readonly index: number[] = [];

  constructor(
    /** +1: iterations visited upwards (a forward sweep); −1: downwards (a reverse sweep). */
    private readonly direction: 1 | -1,
  ) {}

  /** Iteration r uses pattern i (r visited in the sweep's order). */
  set(r: number, i: number): void {
    if (this.index.length > 0 && this.index[this.index.length - 1] === i) return;
    this.first.push(r);
    this.index.push(i);
  }

  /** The pattern of iteration r. */
  at(r: number): number {
    return this.index[this.entry(r)];
  }

  /** The last iteration (in the sweep's order) from r on with r's pattern. */
  end(r: number): number {
    const e = this.entry(r);
    return e + 1 < this.first.length ? this.first[e + 1] - this.direction : this.direction > 0 ? Infinity : -Infinity;
  }

  /** The entry covering r: the last whose first iteration is at or before r in the sweep's order. */
  private entry(r: number): number {
    const d = this.direction;
    let lo = 0;
    let hi = this.first.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if ((this.first[mid] - r) * d <= 0) lo = mid;
      else hi = mid - 1;
    }
    return lo;
  }
}
