import { notFound, validationError } from '../../core/errors';
import { PushCredentialsMissing, pushAppOf, pushCredentials } from './credentials';

/**
 * The app's VAPID public key (RFC 8292), which a browser needs as `applicationServerKey` to subscribe: from the
 * app's Web Push credentials. An unknown app is a 400 naming `app_id`; an app without Web Push is a 404.
 */
export const vapidPublicKey = async (appId: string | null) => {
  let name: string;
  try {
    name = pushAppOf(appId).name;
  } catch (error) {
    if (!(error instanceof PushCredentialsMissing)) throw error;
    if (appId === null) throw notFound(error.message);
    throw validationError('Invalid query string', [{ field: 'app_id', issue: error.message }]);
  }
  let credentials: unknown;
  try {
    credentials = await pushCredentials(name, 'webpush');
  } catch (error) {
    if (error instanceof PushCredentialsMissing) throw notFound(error.message);
    throw error;
  }
  const publicKey = (credentials as { public_key?: unknown } | null)?.public_key;
  // A stage whose secret lacks the key is misconfigured: a 500 with the cause in the log, not a client error.
  if (typeof publicKey !== 'string')
    throw new Error(`the Web Push credentials of ${name} have no public_key`);
  return { app_id: name, public_key: publicKey };
};
