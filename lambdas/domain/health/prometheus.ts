/**
 * Prometheus text for this function instance. On AWS each function is its own process, so these are
 * per-instance figures; the service-wide numbers are the CloudWatch (EMF) metrics (docs/operations.md).
 */
export const processMetrics = (startedAtMs: number, invocations: number): string => {
  const memory = process.memoryUsage();
  const lines = [
    '# HELP notify_process_uptime_seconds Seconds since this function instance started.',
    '# TYPE notify_process_uptime_seconds gauge',
    `notify_process_uptime_seconds ${((Date.now() - startedAtMs) / 1000).toFixed(3)}`,
    '# HELP notify_process_resident_memory_bytes Resident memory of this instance.',
    '# TYPE notify_process_resident_memory_bytes gauge',
    `notify_process_resident_memory_bytes ${memory.rss}`,
    '# HELP notify_process_heap_used_bytes V8 heap in use.',
    '# TYPE notify_process_heap_used_bytes gauge',
    `notify_process_heap_used_bytes ${memory.heapUsed}`,
    '# HELP notify_metrics_scrapes_total Scrapes served by this instance.',
    '# TYPE notify_metrics_scrapes_total counter',
    `notify_metrics_scrapes_total ${invocations}`,
  ];
  return `${lines.join('\n')}\n`;
};
