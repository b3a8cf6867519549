import { parseArgs } from 'node:util';

/** One line on stderr and exit 1: the CLI never shows a stack trace for a problem the user can fix. */
export const fail = (message: string): never => {
  process.stderr.write(`notify: ${message}\n`);
  process.exit(1);
};

type Options = Record<string, { readonly type: 'string' | 'boolean' }>;

/**
 * node:util parseArgs, with a usage error reported as one line. `--help` (or `-h`) prints the usage and
 * `details` on stdout and exits 0.
 */
export const parseCliArgs = (
  options: Options,
  usage: string,
  details = '',
): Record<string, string | boolean | undefined> => {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({
      options: { ...options, help: { type: 'boolean', short: 'h' } },
      allowPositionals: false,
      strict: true,
    }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    return fail(`${(error as Error).message}\nusage: ${usage}`);
  }
  if (values.help) {
    process.stdout.write(`usage: ${usage}\n${details ? `\n${details.trimEnd()}\n` : ''}`);
    process.exit(0);
  }
  return values;
};

/**
 * True when npm ran this script without `-s` and stdout is captured (`$(npm run …)`, a pipe, a file): npm has
 * then already written its `> notify@… script` header into that output.
 */
export const npmHeaderInCapturedOutput = (script: string): boolean =>
  process.env.npm_lifecycle_event === script &&
  process.env.npm_config_loglevel !== 'silent' &&
  !process.stdout.isTTY;
