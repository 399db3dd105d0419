import { ipv4 } from "../ip-address.ts";

/** Slots a new table starts with; it doubles whenever it is half full. */
const INITIAL_SLOTS = 1024;
/** Fibonacci hashing: spreads neighbouring addresses (10.0.0.1, 10.0.0.2, ...) over the table. */
const GOLDEN = 0x9e3779b1;
const MAX_COUNT = 0xffffffff;

/**
 * The request counts of one rate-limit window, by identifier. IPv4 addresses, the identifier of
 * nearly every request, are kept as 32-bit numbers in an open-addressing table of typed arrays:
 * 8 bytes a slot, outside the JavaScript heap. A window of a million clients then costs about
 * 16 MiB and leaves the garbage collector nothing to trace; a Map of address strings took about
 * 100 bytes an entry, all of it traced at every major collection. Other identifiers (IPv6
 * addresses, e-mail addresses) go in a Map.
 *
 * @example
 * const counts = new WindowCounts();
 * counts.increment("203.0.113.7"); // 1
 * counts.increment("203.0.113.7"); // 2
 */
export class WindowCounts {
  #addresses = new Uint32Array(INITIAL_SLOTS);
  /** 0 marks a free slot: a stored address has been counted at least once. */
  #counts = new Uint32Array(INITIAL_SLOTS);
  #shift = 32 - Math.log2(INITIAL_SLOTS);
  #stored = 0;
  #others = new Map<string, number>();

  /** Counts one more request of `identifier` and returns its count in this window. */
  increment(identifier: string): number {
    const address = ipv4(identifier);
    if (address === null) {
      const count = (this.#others.get(identifier) ?? 0) + 1;
      this.#others.set(identifier, count);
      return count;
    }
    const slot = this.#slotOf(address);
    if (this.#counts[slot] === 0) {
      this.#addresses[slot] = address;
      this.#counts[slot] = 1;
      if (++this.#stored * 2 > this.#counts.length) this.#grow();
      return 1;
    }
    if (this.#counts[slot] < MAX_COUNT) this.#counts[slot]++;
    return this.#counts[slot];
  }

  /** Takes one request of `identifier` back (a refund), never below zero. */
  decrement(identifier: string): void {
    const address = ipv4(identifier);
    if (address === null) {
      const count = this.#others.get(identifier) ?? 0;
      if (count > 1) this.#others.set(identifier, count - 1);
      else this.#others.delete(identifier);
      return;
    }
    const slot = this.#slotOf(address);
    if (this.#counts[slot] > 1) this.#counts[slot]--;
    else if (this.#counts[slot] === 1) this.#free(slot);
  }

  /**
   * Frees `slot` without breaking a probe chain (backward-shift deletion): each later entry of the
   * run moves into the hole when the hole lies between its home slot and where it sits.
   */
  #free(slot: number): void {
    const mask = this.#counts.length - 1;
    this.#counts[slot] = 0;
    this.#stored--;
    let hole = slot;
    for (let next = (slot + 1) & mask; this.#counts[next] !== 0; next = (next + 1) & mask) {
      const home = Math.imul(this.#addresses[next], GOLDEN) >>> this.#shift;
      if (((next - home) & mask) >= ((next - hole) & mask)) {
        this.#addresses[hole] = this.#addresses[next];
        this.#counts[hole] = this.#counts[next];
        this.#counts[next] = 0;
        hole = next;
      }
    }
  }

  /** The count of `identifier` in this window so far, without counting a request. */
  count(identifier: string): number {
    const address = ipv4(identifier);
    if (address === null) return this.#others.get(identifier) ?? 0;
    return this.#counts[this.#slotOf(address)];
  }

  /** The slot holding `address`, or the free slot where it belongs (linear probing). */
  #slotOf(address: number): number {
    const mask = this.#counts.length - 1;
    let slot = Math.imul(address, GOLDEN) >>> this.#shift;
    while (this.#counts[slot] !== 0 && this.#addresses[slot] !== address) slot = (slot + 1) & mask;
    return slot;
  }

  #grow(): void {
    const addresses = this.#addresses;
    const counts = this.#counts;
    this.#addresses = new Uint32Array(counts.length * 2);
    this.#counts = new Uint32Array(counts.length * 2);
    this.#shift--;
    for (let old = 0; old < counts.length; old++) {
      if (counts[old] === 0) continue;
      const slot = this.#slotOf(addresses[old]);
      this.#addresses[slot] = addresses[old];
      this.#counts[slot] = counts[old];
    }
  }
}
