import * as z from './zod';

/** Decimal digits only: a number coercion also reads `0x10`, `1e1`, `+5`, `5.0` and blanks, which are no page size. */
const DECIMAL_DIGITS = /^[0-9]{1,7}$/;

/**
 * The `limit` query parameter of a listing: one integer from 1 to `max` in decimal digits, `fallback` when absent.
 * One message for every way to miss it — a repeated parameter reaches the function joined by a comma (API
 * Gateway's payload 2.0: `limit=1&limit=2` is `"1,2"`), which zod's number coercion reported as "expected number,
 * received NaN".
 */
export const pageLimit = (max: number, fallback: number) => {
  const error = `must be one integer from 1 to ${max}`;
  return z._default(
    z
      .pipe(
        z.string({ error }).check(z.regex(DECIMAL_DIGITS, { error })),
        z
          .coercedNumber<string>({ error })
          .check(z.int({ error }), z.gte(1, { error }), z.lte(max, { error })),
      )
      // Documented as the integer the text must spell (a query value is text on the wire either way).
      .check(z.meta({ type: 'integer', minimum: 1, maximum: max, pattern: undefined })),
    fallback,
  );
};
