import { httpRoute } from '../../../core/http/route';
import { processMetrics } from '../../../domain/health/prometheus';

const startedAt = Date.now();
let scrapes = 0;

export const handler = httpRoute('health.metrics', {}, async () => {
  scrapes += 1;
  return {
    status: 200,
    headers: { 'Content-Type': 'text/plain; version=0.0.4; charset=utf-8' },
    text: processMetrics(startedAt, scrapes),
  };
});
