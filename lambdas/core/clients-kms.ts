import { KMSClient } from '@aws-sdk/client-kms';
import { lazy } from './clients';

export const kms = lazy(() => new KMSClient({}));
