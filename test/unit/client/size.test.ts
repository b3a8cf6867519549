import { describe, expect, it } from 'vitest';
import { REALTIME_BUDGET_BYTES, realtimeSize } from '../../../client/build';

describe('client bundle size', () => {
  it('keeps the realtime part within 8 KiB minified and gzipped', async () => {
    const realtime = await realtimeSize();
    expect(realtime.gzipped).toBeGreaterThan(1024);
    expect(realtime.gzipped).toBeLessThanOrEqual(REALTIME_BUDGET_BYTES);
  });
});
