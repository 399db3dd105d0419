import { isUnavailable } from "../db/unavailable.ts";
import type { Known } from "./last-known-good.ts";

/**
 * Keeps the last value of `load` for `ttlMs`; concurrent callers share one load in flight. A failed
 * load is not kept, so the next caller tries again. While the database is unavailable, the last
 * value loaded is answered however old, with its age (stale-if-error): one value, so the bound is
 * the payload's own size.
 *
 * @example
 * const categories = ttlCache(() => store.categories(db), 5_000, Date.now);
 * const { value, age } = await categories();
 */
export function ttlCache<T>(load: () => Promise<T>, ttlMs: number, now: () => number): () => Promise<Known<T>> {
  let value: Promise<T> | undefined;
  let expires = 0;
  let good: { value: T; at: number } | undefined;
  return async function cached() {
    const at = now();
    if (!value || at >= expires) {
      expires = at + ttlMs;
      const loading = load();
      value = loading;
      loading.then(
        (loaded) => (good = { value: loaded, at }),
        () => {
          if (value === loading) expires = 0;
        },
      );
    }
    try {
      return { value: await value, age: null };
    } catch (error) {
      if (!good || !isUnavailable(error)) throw error;
      return { value: good.value, age: Math.max(0, Math.floor((now() - good.at) / 1000)) };
    }
  };
}
