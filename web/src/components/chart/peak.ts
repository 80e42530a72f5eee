/** The highest known value of a series and its index; null when it has none. */
export function peakOf(values: ArrayLike<number | null | undefined>): { index: number; value: number } | null {
  let best: { index: number; value: number } | null = null;
  for (let index = 0; index < values.length; index += 1) {
    const value = values[index];
    if (value !== null && value !== undefined && (best === null || value > best.value)) best = { index, value };
  }
  return best;
}
