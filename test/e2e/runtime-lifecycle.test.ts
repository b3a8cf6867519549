import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { Wiring } from '../../lib/wiring';
import { PortInUseError } from '../../local/gateway/server';
import { startTestRuntime } from '../support/runtime';

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

const dataDir = mkdtempSync(join(tmpdir(), 'notify-runtime-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

describe('the runtime on the service wiring', () => {
  it('refuses a port in use with PortInUseError before starting anything', async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    const port = (holder.address() as AddressInfo).port;
    try {
      await expect(startTestRuntime({ port, wiring: emptyWiring })).rejects.toBeInstanceOf(PortInUseError);
    } finally {
      holder.close();
    }
  });

  it('refuses function timeouts for no function, or not shorter than declared, before starting anything', async () => {
    await expect(startTestRuntime({ functionTimeouts: { 'push.send': 5 } })).rejects.toThrow(
      'functionTimeouts names no function: push.send',
    );
    for (const secs of [30, 45, 0]) {
      await expect(startTestRuntime({ functionTimeouts: { 'push.deliver': secs } })).rejects.toThrow(
        'functionTimeouts.push.deliver must be shorter than its declared timeout',
      );
    }
  });

  it('serves the health routes, verifies its dev tokens, runs the fan-out worker and stops its Java process', async () => {
    const first = await startTestRuntime({ dataDir });
    let javaPid: number | undefined;
    try {
      javaPid = first.javaPid;
      expect(javaPid).toBeTypeOf('number');
      expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBe(first.env.AWS_ENDPOINT_URL_DYNAMODB);

      expect((await fetch(`${first.httpUrl}/live`)).status).toBe(200);
      expect((await fetch(`${first.httpUrl}/ready`)).status).toBe(200);

      const service = await first.mintServiceToken('billing', ['notifications:write']);
      const created = await fetch(`${first.httpUrl}/notifications`, {
        method: 'POST',
        headers: { authorization: `Bearer ${service}`, 'content-type': 'application/json' },
        body: JSON.stringify({ event_type: 'test.kept', title: 'kept', recipient_ids: ['alice'] }),
      });
      expect(created.status).toBe(202);
      // Fan-out runs on the SQS worker: wait until the receiver is written before stopping.
      const alice = await first.mintUserToken('alice');
      let count = 0;
      for (let attempt = 0; attempt < 200 && count === 0; attempt += 1) {
        const response = await fetch(`${first.httpUrl}/notifications/unread-count`, {
          headers: { authorization: `Bearer ${alice}` },
        });
        count = ((await response.json()) as { count: number }).count;
        if (count === 0) await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(count).toBe(1);
    } finally {
      await first.stop();
    }
    expect(isAlive(javaPid as number)).toBe(false);
    expect(process.env.AWS_ENDPOINT_URL_DYNAMODB).toBeUndefined();

    await expect(startTestRuntime()).rejects.toThrow(/one runtime per process/);
    // Starts a JVM inside the test body: a generous ceiling for a loaded 2-core machine, not a timing check.
  }, 120_000);
});

const emptyWiring: Wiring = {
  httpRoutes: [],
  webSocketRoutes: [],
  tables: [],
  queues: [],
  workers: [],
  busRules: [],
  recurringSchedules: [],
  scheduleTargets: [],
};
