// The one zod entry of function code: zod/mini (functional API, tree-shakes to tens of KiB where full zod is
// 444 KiB) with English messages. zod/mini sets no locale, so without this every issue would read
// "Invalid input"; en.js is loaded by path because `z.locales` would bundle every language.
// Import it as a namespace (`import * as z from '…/core/zod'`): re-exporting zod/mini's namespace as one
// object would defeat tree shaking.
import { config } from 'zod/mini';
import en from 'zod/v4/locales/en.js';

config(en());

export * from 'zod/mini';
