import { parseArgs } from 'node:util';

/** One line on stderr and exit 1: the CLI never shows a stack trace for a problem the user can fix. */
export const fail = (message: string): never => {
  process.stderr.write(`notify: ${message}\n`);
  process.exit(1);
};

type Options = Record<string, { readonly type: 'string' | 'boolean' }>;

/** node:util parseArgs, with a usage error reported as one line. */
export const parseCliArgs = (
  options: Options,
  usage: string,
): Record<string, string | boolean | undefined> => {
  try {
    return parseArgs({ options, allowPositionals: false, strict: true }).values as Record<
      string,
      string | boolean | undefined
    >;
  } catch (error) {
    return fail(`${(error as Error).message}\nusage: ${usage}`);
  }
};
