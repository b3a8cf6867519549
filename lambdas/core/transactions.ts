import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import type { TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { documentClient } from './clients';

/** Attempts of a transaction that DynamoDB cancels for a conflict with another transaction on the same items. */
const MAX_TRANSACTION_ATTEMPTS = 8;

const backoff = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * 2 ** Math.min(attempt, 6)));

/**
 * Runs a transaction, retrying the ones DynamoDB cancels for a conflict with another transaction on the same
 * items; `onCancelled` turns a condition failure into an answer (or rethrows); `tooBusy` is thrown when the
 * conflicts outlast the attempts.
 */
export const transactRetryingConflicts = async <T>(
  command: TransactWriteCommand,
  done: () => T,
  onCancelled: (codes: (string | undefined)[], error: TransactionCanceledException) => Promise<T>,
  tooBusy: () => Error,
): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      await documentClient().send(command);
      return done();
    } catch (error) {
      if (!(error instanceof TransactionCanceledException)) throw error;
      const codes = (error.CancellationReasons ?? []).map((reason) => reason.Code);
      if (codes.includes('ConditionalCheckFailed')) return onCancelled(codes, error);
      if (attempt >= MAX_TRANSACTION_ATTEMPTS) throw tooBusy();
      await backoff(attempt);
    }
  }
};
