/**
 * The account and region of the local runtime: every stand-in's ARNs, queue URLs and records carry them, and a
 * request naming another account or region is refused as AWS would refuse it.
 */
export const LOCAL_ACCOUNT_ID = '000000000000';
export const LOCAL_REGION = 'us-east-1';
