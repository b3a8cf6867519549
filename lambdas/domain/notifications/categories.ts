import * as z from '../../core/zod';

// Apart from the creation schema, so the feed's query (its filters) and the preferences (category rules) share
// the names without loading POST /notifications' schema.

/** A category: lower-case dotted name like an event type (`billing.invoices`), 1–64 characters. */
export const CATEGORY = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*$/;
export const MAX_CATEGORY_CHARACTERS = 64;
/** A tag: 1–32 characters of `A-Z a-z 0-9 _ : . -`. */
export const TAG = /^[A-Za-z0-9_:.-]{1,32}$/;
/** Tags one notification may carry. */
export const MAX_TAGS = 5;

// The length checks abort: a name of the wrong length is told so once, not also that it is malformed.
export const categorySchema = z
  .string()
  .check(
    z.minLength(1, { abort: true }),
    z.maxLength(MAX_CATEGORY_CHARACTERS, { abort: true }),
    z.regex(CATEGORY, 'must be a lower-case dotted name'),
  );

export const tagSchema = z
  .string()
  .check(
    z.minLength(1, { abort: true }),
    z.maxLength(32, { abort: true }),
    z.regex(TAG, 'must be 1-32 of A-Za-z0-9_:.-'),
  );
