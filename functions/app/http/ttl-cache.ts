/**
 * Keeps the last value of `load` for `ttlMs`; concurrent callers share one load in flight.
 * A failed load is not kept, so the next caller tries again.
 *
 * @example
 * const categories = ttlCache(() => store.categories(db), 5_000, Date.now);
 * const body = await categories();
 */
export function ttlCache<T>(load: () => Promise<T>, ttlMs: number, now: () => number): () => Promise<T> {
  let value: Promise<T> | undefined;
  let expires = 0;
  return function cached() {
    const at = now();
    if (value && at < expires) return value;
    expires = at + ttlMs;
    const loading = load();
    value = loading;
    loading.catch(() => {
      if (value === loading) expires = 0;
    });
    return loading;
  };
}
