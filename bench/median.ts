// The median, which every section reports across its rounds (robust to one noisy round).

/**
 * The median of a non-empty list.
 * @example
 * median([3, 1, 2]) // 2
 */
export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}
