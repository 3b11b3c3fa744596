/**
 * Smallest and largest of a list of numbers by a plain loop. `Math.min(...xs)` passes every value
 * as an argument and throws a RangeError past about 120,000 of them, and a hostile page can hold
 * that many text runs; these never throw. Both return the `empty` value for an empty list
 * (Infinity / −Infinity, as Math.min() and Math.max() do, unless told otherwise). Pure.
 */

export function minOf<T>(items: Iterable<T>, value: (item: T) => number, empty = Number.POSITIVE_INFINITY): number {
  let min = Number.POSITIVE_INFINITY;
  let any = false;
  for (const item of items) {
    const v = value(item);
    any = true;
    if (v < min) min = v;
  }
  return any ? min : empty;
}

export function maxOf<T>(items: Iterable<T>, value: (item: T) => number, empty = Number.NEGATIVE_INFINITY): number {
  let max = Number.NEGATIVE_INFINITY;
  let any = false;
  for (const item of items) {
    const v = value(item);
    any = true;
    if (v > max) max = v;
  }
  return any ? max : empty;
}
