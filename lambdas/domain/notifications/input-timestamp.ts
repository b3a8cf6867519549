import * as z from '../../core/zod';

/**
 * RFC 3339 allows lowercase `t` and `z` (§5.6); they are upper-cased before zod's ISO check and stored so. A
 * malformed time aborts, so checks of its value (in the future, how far ahead) do not report it a second time.
 */
export const timestamp = z.pipe(
  z
    .string()
    .check(
      z.toUpperCase(),
      z.meta({ format: 'date-time', description: 'RFC 3339 timestamp with an offset (Z or ±hh:mm)' }),
    ),
  z.isoDateTime({ offset: true, error: 'must be an RFC 3339 timestamp', abort: true }),
);
