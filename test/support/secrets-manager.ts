/**
 * Secrets Manager has no local stand-in: a 127.0.0.1 server answers GetSecretValue in its JSON protocol, so
 * the real SDK client is exercised end to end (AWS_ENDPOINT_URL_SECRETS_MANAGER points at it).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface SecretsManagerServer {
  readonly endpoint: string;
  /** The variables that point an SDK client in this process at the stand-in (region, credentials, endpoint). */
  readonly clientEnv: Readonly<Record<string, string>>;
  /** The SecretId of every GetSecretValue call, in order. */
  readonly reads: string[];
  /** The SecretString returned from now on. */
  setSecret(value: string): void;
  /** The next call fails with a 500. */
  failNext(): void;
  close(): Promise<void>;
}

export const startSecretsManager = async (initialSecret: string): Promise<SecretsManagerServer> => {
  let secret = initialSecret;
  let failNext = false;
  const reads: string[] = [];
  const server = createServer((request, response) => {
    let text = '';
    request.on('data', (chunk) => {
      text += chunk;
    });
    request.on('end', () => {
      response.setHeader('content-type', 'application/x-amz-json-1.1');
      if (request.headers['x-amz-target'] !== 'secretsmanager.GetSecretValue') {
        response.statusCode = 400;
        response.end(JSON.stringify({ __type: 'InvalidRequestException', message: 'unsupported' }));
        return;
      }
      const { SecretId } = JSON.parse(text) as { SecretId: string };
      reads.push(SecretId);
      if (failNext) {
        failNext = false;
        response.statusCode = 500;
        response.end(JSON.stringify({ __type: 'InternalServiceError', message: 'down' }));
        return;
      }
      response.end(JSON.stringify({ ARN: SecretId, Name: 'secret', SecretString: secret }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    endpoint,
    clientEnv: {
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'local',
      AWS_SECRET_ACCESS_KEY: 'local',
      AWS_MAX_ATTEMPTS: '1',
      AWS_ENDPOINT_URL_SECRETS_MANAGER: endpoint,
    },
    reads,
    setSecret: (value) => {
      secret = value;
    },
    failNext: () => {
      failNext = true;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};
