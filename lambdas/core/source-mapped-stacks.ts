import { existsSync, readFileSync } from 'node:fs';
import { SourceMap } from 'node:module';
import { fileURLToPath } from 'node:url';

/**
 * Stack traces of a bundled function in the repository's own files and lines (`lambdas/core/errors.ts:63:3`)
 * instead of the minified bundle's (`index.mjs:1:48213`), with its source map read when a stack is first
 * formatted — an error logged — instead of at every cold start. `NODE_OPTIONS=--enable-source-maps` would make
 * Node read and index the map while loading the bundle, a cost every cold start would pay (docs/performance.md).
 *
 * Installed only where a map lies beside this module's file, i.e. in a bundle built with one (the stack's
 * NotifyFunction, the cold start bench); unbundled code (the local runtime, tests) keeps the stacks its loader
 * maps, which a `prepareStackTrace` of ours would turn off.
 */

const moduleFile = (() => {
  try {
    return fileURLToPath(import.meta.url);
  } catch {
    return undefined;
  }
})();

/** How the bundle's frames name their file: V8 gives an ES module's URL, a script's path. */
const isBundleFrame = (file: string | null | undefined): boolean =>
  file !== null && file !== undefined && (file === import.meta.url || file === moduleFile);

let sourceMap: SourceMap | null | undefined;

/** The bundle's source map, read on first use; null when it cannot be read (stacks then stay as V8 made them). */
const bundleSourceMap = (): SourceMap | null => {
  if (sourceMap === undefined) {
    try {
      sourceMap = new SourceMap(JSON.parse(readFileSync(`${moduleFile}.map`, 'utf8')));
    } catch {
      sourceMap = null;
    }
  }
  return sourceMap;
};

/** esbuild writes sources relative to the map (`../../lambdas/core/errors.ts`): the repository-relative path. */
const sourcePath = (source: string): string => source.replace(/^(\.\.?\/)+/, '');

/** V8's call site, with the start of the function it is in (not in @types/node 20's CallSite yet). */
type CallSite = NodeJS.CallSite & {
  getEnclosingLineNumber?(): number | null;
  getEnclosingColumnNumber?(): number | null;
};

interface Original {
  readonly file: string;
  readonly line: number;
  readonly column: number;
  readonly name: string | undefined;
}

/** Where a frame of the bundle was in the source, or undefined for frames of other files or unmapped code. */
const originalOf = (site: CallSite): Original | undefined => {
  const line = site.getLineNumber();
  const column = site.getColumnNumber();
  if (!isBundleFrame(site.getFileName()) || line === null || column === null) return undefined;
  const entry = bundleSourceMap()?.findEntry(line - 1, column - 1);
  // A segment may carry no source position (the format allows it): such a frame stays as V8 wrote it.
  if (!entry || !('originalSource' in entry) || typeof entry.originalSource !== 'string') return undefined;
  if (typeof entry.originalLine !== 'number' || typeof entry.originalColumn !== 'number') return undefined;
  return {
    file: sourcePath(entry.originalSource),
    line: entry.originalLine + 1,
    column: entry.originalColumn + 1,
    // Node's mappings carry the name the map gives the range (not in @types/node 20's SourceMapping yet).
    name: (entry as { name?: string }).name,
  };
};

/**
 * The function's name in the source, found as Node's own source map support finds it: the name the map gives
 * the start of the function, else the position of its caller's call (the identifier called there).
 */
const originalName = (site: CallSite, caller: CallSite | undefined): string | undefined => {
  const line = site.getEnclosingLineNumber?.();
  const column = site.getEnclosingColumnNumber?.();
  const enclosing = line && column ? bundleSourceMap()?.findEntry(line - 1, column - 1) : undefined;
  const name = (enclosing as { name?: string } | undefined)?.name;
  return name || (caller ? originalOf(caller)?.name : undefined);
};

/**
 * One frame as V8 writes it, at the original position. Without a name from the map, the bundle's (minified) one
 * with its receiver's type, as Node's source map support writes it. A frame that cannot be mapped, for whatever
 * reason, stays as V8 wrote it: formatting a stack must never throw, or every read of `error.stack` — every error
 * log — would.
 */
const frameText = (site: CallSite, caller: CallSite | undefined): string => {
  try {
    const original = originalOf(site);
    if (!original) return site.toString();
    const where = `${original.file}:${original.line}:${original.column}`;
    const typeName = site.isConstructor() || site.isToplevel() ? null : site.getTypeName();
    const ownName = site.getFunctionName() ?? site.getMethodName();
    const name =
      originalName(site, caller) ||
      (typeName && typeName !== 'global' ? `${typeName}.${ownName ?? '<anonymous>'}` : ownName);
    const prefix = `${site.isAsync() ? 'async ' : ''}${site.isConstructor() ? 'new ' : ''}`;
    return name ? `${prefix}${name} (${where})` : `${prefix}${where}`;
  } catch {
    return site.toString();
  }
};

const headerOf = (error: Error): string => {
  try {
    return Error.prototype.toString.call(error);
  } catch {
    return '<error>';
  }
};

/** V8's `Error.prepareStackTrace` signature: the stack text of `error` from its call sites. */
export const sourceMappedStack = (error: Error, sites: readonly NodeJS.CallSite[]): string =>
  [headerOf(error), ...sites.map((site, index) => `    at ${frameText(site, sites[index + 1])}`)].join('\n');

/** True when the stack traces of this process are mapped by this module. */
export const installSourceMappedStacks = (): boolean => {
  if (!moduleFile || !existsSync(`${moduleFile}.map`)) return false;
  Error.prepareStackTrace = sourceMappedStack;
  return true;
};
