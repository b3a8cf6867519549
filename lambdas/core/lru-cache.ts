/**
 * Stands in for `mnemonist/lru-cache` in the Lambda bundles (an esbuild alias, lib/constructs/bundling.ts).
 * Its one user there is the SDK's `@aws-sdk/endpoint-cache`, which every DynamoDB client creates for endpoint
 * discovery (off unless asked for) and which calls only the methods below; mnemonist's typed-array LRU with
 * its iterator helpers was 7 KiB of every bundle with DynamoDB. Same behaviour on a `Map`, whose insertion
 * order is the recency order: `get` and `set` make a key the most recent, `has` and `peek` do not, and a
 * `set` of a new key into a full cache drops the least recent. test/unit/lambda-bundle.test.ts compares it with
 * mnemonist's on random operations. The token introspection cache (auth/introspection.ts) uses it too.
 */
export default class LruCache<K, V> {
  private readonly items = new Map<K, V>();

  constructor(readonly capacity: number) {
    if (!(capacity > 0)) throw new Error('LruCache: capacity must be a positive number');
  }

  get size(): number {
    return this.items.size;
  }

  clear(): void {
    this.items.clear();
  }

  set(key: K, value: V): this {
    this.items.delete(key);
    if (this.items.size >= this.capacity) this.items.delete(this.items.keys().next().value as K);
    this.items.set(key, value);
    return this;
  }

  get(key: K): V | undefined {
    if (!this.items.has(key)) return undefined;
    const value = this.items.get(key) as V;
    this.items.delete(key);
    this.items.set(key, value);
    return value;
  }

  peek(key: K): V | undefined {
    return this.items.get(key);
  }

  has(key: K): boolean {
    return this.items.has(key);
  }
}
