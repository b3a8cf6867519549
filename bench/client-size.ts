import {
  bundleSize,
  ELEMENTS_BUDGET_BYTES,
  elementsSize,
  REALTIME_BUDGET_BYTES,
  realtimeSize,
} from '../client/build';

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
  const elements = await elementsSize();
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
    {
      part: 'web components (with the app SDK)',
      exports: 'createNotify, defineNotifyElements',
      minifiedBytes: elements.minified,
      gzippedBytes: elements.gzipped,
      budgetBytes: ELEMENTS_BUDGET_BYTES,
    },
  ];
};
