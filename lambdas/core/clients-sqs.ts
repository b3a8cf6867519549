import { SQSClient } from '@aws-sdk/client-sqs';
import { lazy } from './clients';

export const sqs = lazy(() => new SQSClient({}));
