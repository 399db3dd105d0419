export interface Bound<V> {
  /** The most entries kept. */
  capacity: number;
  /** The most bytes of values kept, as `sizeOf` counts them. Default: no byte bound. */
  maxBytes?: number;
  sizeOf?: (value: V) => number;
}

/**
 * A `Map` that keeps at most `capacity` entries (and, given `sizeOf`, `maxBytes` of values): each
 * `set` makes its entry the newest, and past a bound the entry set longest ago goes first. It is
 * still a `Map` (`instanceof Map`), so it can be handed to code that takes one, such as
 * @upstash/ratelimit's `ephemeralCache`, which would otherwise keep every refused client for the
 * life of the instance. Every in-process cache of the app is one of these.
 *
 * @example
 * const payloads = new BoundedMap<string, string>({ capacity: 10_000, maxBytes: 16 << 20, sizeOf: (text) => text.length });
 */
export class BoundedMap<K, V> extends Map<K, V> {
  #bytes = 0;

  constructor(readonly bound: Bound<V>) {
    super();
  }

  /** Bytes of the values held, as `sizeOf` counts them (0 without it). */
  get bytes(): number {
    return this.#bytes;
  }

  override set(key: K, value: V): this {
    this.delete(key);
    super.set(key, value);
    this.#bytes += this.bound.sizeOf?.(value) ?? 0;
    const maxBytes = this.bound.maxBytes ?? Infinity;
    while (this.size > this.bound.capacity || this.#bytes > maxBytes) this.delete(this.keys().next().value as K);
    return this;
  }

  override delete(key: K): boolean {
    if (!this.has(key)) return false;
    this.#bytes -= this.bound.sizeOf?.(this.get(key) as V) ?? 0;
    return super.delete(key);
  }

  override clear(): void {
    this.#bytes = 0;
    super.clear();
  }
}
