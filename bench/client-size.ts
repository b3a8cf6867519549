import { bundleSize, REALTIME_BUDGET_BYTES, realtimeSize } from '../client/build';

export interface ClientSizeRow {
  readonly part: string;
  readonly exports: string;
  readonly minifiedBytes: number;
  readonly gzippedBytes: number;
  readonly budgetBytes?: number;
}

/** What an app ships of the client SDK (client/), bundled and minified by esbuild as an app's bundler would. */
export const measureClientSize = async (): Promise<ClientSizeRow[]> => {
  const realtime = await realtimeSize();
  const app = await bundleSize('createNotify');
  return [
    {
      part: 'realtime',
      exports: 'RealtimeClient',
      minifiedBytes: realtime.minified,
      gzippedBytes: realtime.gzipped,
      budgetBytes: REALTIME_BUDGET_BYTES,
    },
    {
      part: 'app (realtime + REST + inbox)',
      exports: 'createNotify',
      minifiedBytes: app.minified,
      gzippedBytes: app.gzipped,
    },
  ];
};
