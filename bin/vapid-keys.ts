/**
 * `npm run vapid-keys`: a new VAPID key pair for Web Push, printed as the JSON of an app's `webpush` secret in
 * Secrets Manager, `{"public_key", "private_key", "subject"}` (docs/push.md, "Web Push").
 *
 *   npm run -s vapid-keys -- --subject mailto:ops@example.com
 *
 * Keys are base64url raw P-256 (the public key a 65-byte uncompressed point, the private key 32 bytes), the form
 * web-push's generateVAPIDKeys gives. Prints only the JSON, so `npm run -s vapid-keys -- … > vapid.json` works.
 */
import { generateVapidCredentials } from '../lambdas/domain/push/webpush';
import { fail, npmHeaderInCapturedOutput, parseCliArgs } from '../local/cli/args';

const USAGE = 'npm run -s vapid-keys -- --subject mailto:ADDRESS|https://URL';
const DETAILS = `Prints a new VAPID key pair with its subject as JSON on stdout, nothing else.
  --subject   how push services reach you about your traffic: a mailto: address or an https: URL
Store the output as the app's webpush secret; browsers subscribe with its public_key (applicationServerKey).
A new key pair invalidates every subscription made with the old one.`;

const args = parseCliArgs({ subject: { type: 'string' } }, USAGE, DETAILS);
if (npmHeaderInCapturedOutput('vapid-keys')) {
  fail(
    'npm has printed its "> notify@… vapid-keys" header into this output, so it would not be JSON: ' +
      'run `npm run -s vapid-keys -- …` (-s keeps npm quiet)',
  );
}
const subject = args.subject;
if (typeof subject !== 'string') fail(`--subject is required\nusage: ${USAGE}`);
try {
  process.stdout.write(`${JSON.stringify(generateVapidCredentials(subject as string), null, 2)}\n`);
} catch (error) {
  fail((error as Error).message);
}
