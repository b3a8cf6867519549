/**
 * The counts GET /notifications/counts answers, computed from a list of default-feed items: the tests' statement
 * of what the counts must equal (the feed as listed, or a model of it).
 */
export interface CountedItem {
  readonly category: string | null;
  readonly read: boolean;
  readonly seen: boolean;
}

export const countsOf = (items: readonly CountedItem[]) => {
  const tally = (of: readonly CountedItem[]) => ({
    unseen: of.filter((item) => !item.seen).length,
    unread: of.filter((item) => !item.read).length,
    total: of.length,
  });
  const categories = [...new Set(items.flatMap((item) => (item.category === null ? [] : [item.category])))];
  return {
    ...tally(items),
    categories: Object.fromEntries(
      categories.map((category) => [category, tally(items.filter((item) => item.category === category))]),
    ),
  };
};

/** The counts of feed items as GET /notifications lists them. */
export const countsOfListed = (
  items: readonly {
    readonly category: string | null;
    readonly read_at: string | null;
    readonly seen_at: string | null;
  }[],
) =>
  countsOf(
    items.map((item) => ({
      category: item.category,
      read: item.read_at !== null,
      seen: item.seen_at !== null,
    })),
  );
