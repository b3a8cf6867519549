import { describe, expect, it } from 'vitest';
import {
  ELEMENTS_BUDGET_BYTES,
  elementsSize,
  REALTIME_BUDGET_BYTES,
  realtimeSize,
} from '../../../client/build';

describe('client bundle size', () => {
  it('keeps the realtime part within 8 KiB minified and gzipped', async () => {
    const realtime = await realtimeSize();
    expect(realtime.gzipped).toBeGreaterThan(1024);
    expect(realtime.gzipped).toBeLessThanOrEqual(REALTIME_BUDGET_BYTES);
  });

  it('keeps the web components with the whole app SDK within 20 KiB minified and gzipped', async () => {
    const [elements, realtime] = await Promise.all([elementsSize(), realtimeSize()]);
    expect(elements.gzipped).toBeGreaterThan(realtime.gzipped);
    expect(elements.gzipped).toBeLessThanOrEqual(ELEMENTS_BUDGET_BYTES);
  });
});
