/**
 * A `Map` that holds at most `capacity` entries: setting a new key past it drops the entry set
 * longest ago. Still a `Map` (`instanceof Map`), so it can be handed to code that takes one, such
 * as @upstash/ratelimit's `ephemeralCache`, which otherwise keeps every refused client for the
 * life of the instance.
 *
 * @example
 * const refused = new BoundedMap<string, number>(10_000);
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(readonly capacity: number) {
    super();
  }

  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.capacity) this.delete(this.keys().next().value as K);
    return super.set(key, value);
  }
}
