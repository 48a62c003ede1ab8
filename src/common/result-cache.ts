/**
 * A small least-recently-used map for results that never change once
 * computed (a verification of immutable inputs, keyed by what identifies
 * them). Values are shared between callers: never modify one.
 */
export class ResultCache<T> {
  private readonly map = new Map<string, T>();

  constructor(private readonly capacity: number) {}

  get(key: string): T | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: string, value: T): void {
    this.map.delete(key);
    this.map.set(key, value);
    while (this.map.size > this.capacity) this.map.delete(this.map.keys().next().value as string);
  }

  get size(): number {
    return this.map.size;
  }
}
