/**
 * docs/webhooks.md "Verifying a delivery": its snippets, exactly as written there, verify real deliveries of the
 * local runtime (one with a plain secret holding non-ASCII characters, one with a `whsec_` secret) and refuse a
 * tampered body; and what the page says about each library's secret forms holds.
 */
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { Webhook as StandardWebhook } from 'standardwebhooks';
import { Webhook as SvixWebhook } from 'svix';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/paths';
import { apiClient, eventually } from '../support/api';
import { type Runtime, startTestRuntime } from '../support/runtime';
import { type Received, WebhookReceiver } from './webhook-receiver';

const run = promisify(execFile);

/** The page's ```js block that imports `library`. */
const snippetOf = (library: string): string => {
  const page = readFileSync(join(repoRoot, 'docs/webhooks.md'), 'utf8');
  const blocks = [...page.matchAll(/```js\n([\s\S]*?)```/g)].map((match) => match[1] ?? '');
  const block = blocks.find((code) => code.includes(`from '${library}'`));
  if (!block) throw new Error(`docs/webhooks.md has no js snippet importing ${library}`);
  return block;
};

/** Runs `snippet` as a receiver would (its own module, the secret in its environment) on a delivery. */
const runSnippet = async (snippet: string, secret: string, delivery: Received) => {
  const driver = `
const { body, headers } = JSON.parse(process.env.DELIVERY);
const verified = verifyDelivery(body, headers);
let tampered = 'accepted';
try { verifyDelivery(body.replace('"version":2', '"version":3'), headers); } catch { tampered = 'refused'; }
console.log(JSON.stringify({ verified, tampered }));`;
  const { stdout } = await run(process.execPath, ['--input-type=module', '-e', `${snippet}\n${driver}`], {
    cwd: repoRoot,
    env: {
      ...process.env,
      NOTIFY_WEBHOOK_SECRET: secret,
      DELIVERY: JSON.stringify({ body: delivery.body, headers: delivery.headers }),
    },
  });
  return JSON.parse(stdout) as { verified: { data: { id: string } }; tampered: string };
};

describe('docs/webhooks.md: verifying a delivery', () => {
  let runtime: Runtime;
  const receiver = new WebhookReceiver();
  const api = apiClient(() => runtime.httpUrl);
  const eventType = `verify.e2e${Date.now().toString(36)}`;
  const secrets = {
    plain: 'a plain sécret, not base64 ✓',
    whsec: `whsec_${randomBytes(24).toString('base64')}`,
  };
  const deliveries: Partial<Record<keyof typeof secrets, Received>> = {};
  let eventId = '';

  beforeAll(async () => {
    await receiver.start();
    runtime = await startTestRuntime();
    const admin = await runtime.mintServiceToken('ops', ['webhooks:admin']);
    for (const [form, secret] of Object.entries(secrets)) {
      const url = receiver.endpoint(`/${form}`, secret);
      const created = await api('POST', '/webhooks', admin, {
        url,
        secret,
        event_filters: [eventType],
        name: form,
      });
      expect(created.status).toBe(201);
    }
    const publisher = await runtime.mintServiceToken('shop', ['events:publish']);
    const published = await api('POST', '/events', publisher, {
      event_type: eventType,
      source: 'shop',
      version: 2,
      data: { order: 42, note: 'déjà vu' },
    });
    expect(published.status).toBe(202);
    eventId = published.body.id;
    for (const form of Object.keys(secrets) as (keyof typeof secrets)[]) {
      // What crosses the bus gets a minute on a loaded machine (a ceiling, not a wait).
      deliveries[form] = (await eventually(() => receiver.at(`/${form}`)[0], Boolean, 60_000)) ?? undefined;
      expect(deliveries[form], `a delivery to the ${form} webhook`).toBeDefined();
    }
  }, 120_000);
  afterAll(async () => {
    await runtime?.stop();
    await receiver.stop();
  });

  for (const library of ['standardwebhooks', 'svix']) {
    for (const form of ['plain', 'whsec'] as const) {
      it(`the ${library} snippet verifies a delivery signed with a ${form} secret, and refuses it tampered`, async () => {
        const outcome = await runSnippet(snippetOf(library), secrets[form], deliveries[form] as Received);
        expect(outcome.verified.data.id).toBe(eventId);
        expect(outcome.tampered).toBe('refused');
      });
    }
  }

  it('a plain secret needs { format: "raw" } in both libraries, with its UTF-8 bytes for non-ASCII', () => {
    const delivery = deliveries.plain as Received;
    const headers = delivery.headers as Record<string, string>;
    for (const Webhook of [StandardWebhook, SvixWebhook]) {
      // Read as base64: this secret's characters are not base64, so the constructor throws.
      expect(() => new Webhook(secrets.plain)).toThrow();
      // A string in raw form is one byte per character: not the UTF-8 bytes the service signs with.
      expect(() => new Webhook(secrets.plain, { format: 'raw' }).verify(delivery.body, headers)).toThrow();
      const raw = new Webhook(Buffer.from(secrets.plain, 'utf8'), { format: 'raw' });
      expect(raw.verify(delivery.body, headers)).toMatchObject({ data: { id: eventId } });
    }
  });

  it('a plain secret of base64 letters only gives the wrong key without { format: "raw" }', () => {
    const lookalike = 'abcdabcdabcdabcdabcd';
    const key = new StandardWebhook(Buffer.from(lookalike, 'utf8'), { format: 'raw' });
    const [id, timestamp, body] = ['msg_1', new Date(), '{"type":"x"}'];
    const headers = {
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(timestamp.getTime() / 1000)),
      'webhook-signature': key.sign(id, timestamp, body),
    };
    for (const Webhook of [StandardWebhook, SvixWebhook]) {
      expect(() => new Webhook(lookalike).verify(body, headers)).toThrow();
      expect(new Webhook(Buffer.from(lookalike, 'utf8'), { format: 'raw' }).verify(body, headers)).toEqual({
        type: 'x',
      });
    }
  });
});
