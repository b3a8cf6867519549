import { tokenVerifier } from '../../core/auth';
import { authOperation } from '../../domain/realtime/operations';
import { frameHandler } from './frame';

/** The one frame route that checks tokens: the verifier (jose, the replay store, Secrets Manager) is here alone. */
export const handler = frameHandler({ auth: authOperation((token) => tokenVerifier().verify(token)) });
