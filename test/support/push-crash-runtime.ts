import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';
import { pushSettingName } from '../../common/env';
import { type Hs256Settings, readDevAuth } from '../../local/dev-auth';
import { type ExpoStandIn, startExpoStandIn } from '../../local/push/expo-stand-in';
import { type RuntimeProcess, startRuntimeProcess } from './runtime-process';

/**
 * `npm start --data` in a child process that a crash test kills (SIGKILL to its process group) and starts again on
 * the same port and data, pushing to an Expo stand-in in the test's own process, so that what the stand-in saw
 * outlives the kills. Registers its clean-up: the runtime started last killed, the stand-in closed, the folder
 * removed.
 */
export const pushCrashRuntime = (name: string, env: Readonly<Record<string, string>> = {}) => {
  const work = mkdtempSync(join(tmpdir(), `notify-${name}-`));
  const dataDir = join(work, 'data');
  let latest: RuntimeProcess | undefined;
  let expo: ExpoStandIn | undefined;
  afterAll(async () => {
    await latest?.crash();
    await expo?.close();
    rmSync(work, { recursive: true, force: true });
  });
  const standIn = async (): Promise<ExpoStandIn> => {
    expo ??= await startExpoStandIn();
    return expo;
  };
  return {
    standIn,
    /** Starts the runtime: the first time on a free port, after a kill again on the same `port`. */
    start: async (port?: number): Promise<RuntimeProcess> => {
      const { url } = await standIn();
      latest = await startRuntimeProcess({
        work,
        dataDir,
        ...(port ? { port } : {}),
        env: { ...env, [pushSettingName('EXPO_URL')]: url },
      });
      return latest;
    },
    /** The development signing settings the first start wrote. */
    devAuth: (): Hs256Settings => {
      const settings = readDevAuth(join(work, 'dev-auth.json'));
      if (!settings) throw new Error('npm start wrote no dev-auth.json');
      return settings;
    },
  };
};
