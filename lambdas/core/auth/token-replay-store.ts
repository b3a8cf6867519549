import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from '../clients';

/** Remembers token ids (`jti`) so that each is accepted once. */
export interface TokenReplayStore {
  /**
   * Records `jti` until `expiresAtEpochSecs`; true when this is its first use, false when it was seen before.
   * Throws when the store cannot answer (the caller turns that into 503, never into acceptance).
   */
  firstUse(jti: string, expiresAtEpochSecs: number): Promise<boolean>;
}

/**
 * The replay set on the declared `tokenReplay` table (partition key `jti`, TTL attribute `ttl`), shared by every
 * function instance: one conditional PutItem per token.
 */
export class DynamoDbTokenReplayStore implements TokenReplayStore {
  constructor(
    private readonly tableName: string,
    private readonly client: DynamoDBDocumentClient = documentClient(),
    private readonly nowSecs: () => number = () => Math.floor(Date.now() / 1000),
  ) {}

  async firstUse(jti: string, expiresAtEpochSecs: number): Promise<boolean> {
    try {
      await this.client.send(
        new PutCommand({
          TableName: this.tableName,
          Item: { jti, ttl: expiresAtEpochSecs },
          // DynamoDB deletes expired items late; an entry past its ttl no longer counts as a use.
          ConditionExpression: 'attribute_not_exists(jti) OR #ttl < :now',
          ExpressionAttributeNames: { '#ttl': 'ttl' },
          ExpressionAttributeValues: { ':now': this.nowSecs() },
        }),
      );
      return true;
    } catch (error) {
      if (error instanceof ConditionalCheckFailedException) return false;
      throw error;
    }
  }
}

/** A set of used ids local to one process: for tests of the verifier's rules (Lambda needs the shared one). */
export class InMemoryTokenReplayStore implements TokenReplayStore {
  private readonly seen = new Map<string, number>();

  constructor(private readonly nowSecs: () => number = () => Math.floor(Date.now() / 1000)) {}

  async firstUse(jti: string, expiresAtEpochSecs: number): Promise<boolean> {
    const now = this.nowSecs();
    for (const [id, expiresAt] of this.seen) if (expiresAt < now) this.seen.delete(id);
    if (this.seen.has(jti)) return false;
    this.seen.set(jti, expiresAtEpochSecs);
    return true;
  }
}
