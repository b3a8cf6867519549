/**
 * Runs `work` over `items` with at most `limit` in flight (keeps sockets, memory and a table's write rate
 * bounded where `Promise.all` would start them all). The first failure rejects the call; the other lanes still
 * run to the end of the list.
 */
export const forEachLimited = async <T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> => {
  let next = 0;
  const lanes = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  });
  await Promise.all(lanes);
};
