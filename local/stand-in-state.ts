import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What the local commands (`npm run replay`, `npm run redrive`) use to reach a running runtime: each stand-in
 * started with a data folder writes its endpoint and process id to a state file there (`writeStandInState`), and
 * removes it on stop (`removeStandInState`).
 */

/** Writes a started stand-in's state (its endpoint and what a command needs to reach it) with this process's id. */
export const writeStandInState = (dataDir: string, fileName: string, state: object): void => {
  writeFileSync(join(dataDir, fileName), `${JSON.stringify({ ...state, pid: process.pid }, null, 2)}\n`);
};

/** Removes a stopped stand-in's state file, if it wrote one. */
export const removeStandInState = (dataDir: string, fileName: string): void => {
  rmSync(join(dataDir, fileName), { force: true });
};

/** No stand-in of a running runtime uses the data folder (never started there, or died). */
export class StandInNotRunning extends Error {}

/** The state a stand-in wrote, from the first of `fileNames` (relative to `dataDir`) that exists. */
export const readStandInState = <State extends { readonly pid: number }>(
  dataDir: string,
  fileNames: readonly string[],
): State => {
  const file = fileNames.map((name) => join(dataDir, name)).find((candidate) => existsSync(candidate));
  if (!file) {
    throw new StandInNotRunning(
      `no running runtime uses ${dataDir}: start it with \`npm start -- --data ${dataDir}\` first`,
    );
  }
  const state = JSON.parse(readFileSync(file, 'utf8')) as State;
  try {
    process.kill(state.pid, 0);
  } catch (error) {
    // EPERM: alive but someone else's; ESRCH: the runtime died without cleaning up.
    if ((error as NodeJS.ErrnoException).code === 'ESRCH') {
      throw new StandInNotRunning(`the runtime that used ${dataDir} (pid ${state.pid}) is no longer running`);
    }
  }
  return state;
};
