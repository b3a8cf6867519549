import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build, transformSync } from 'esbuild';
import { repoRoot } from '../../lib/paths';

/**
 * The structure of the code under lambdas/ as esbuild reads it, for tests of the project's own rules:
 * the runtime imports of each file (type-only imports are erased, as at run time) and each file's code without
 * types and comments. Paths are relative to the repository root, with forward slashes.
 */

/** Every TypeScript file under `folder` (relative to the repository root). */
export const sourceFiles = (folder = 'lambdas'): string[] =>
  readdirSync(path.join(repoRoot, folder), { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.ts') && !file.endsWith('.d.ts'))
    .map((file) => `${folder}/${file.split(path.sep).join('/')}`)
    .sort();

export interface SourceImports {
  /** Files of the repository this file imports. */
  readonly files: string[];
  /** Packages it imports (`@aws-sdk/client-sqs`, `zod`, ...). */
  readonly packages: string[];
}

const graphs = new Map<string, Promise<Map<string, SourceImports>>>();

/**
 * Each file's runtime imports under `folders`, from esbuild's metafile of one build that imports every file: the
 * same graph as a build with each file as an entry point, without making a bundle per file (a tenth of the time).
 */
export const importGraph = (...folders: string[]): Promise<Map<string, SourceImports>> => {
  const roots = folders.length > 0 ? folders : ['lambdas'];
  const key = roots.join(',');
  const cached = graphs.get(key);
  if (cached) return cached;
  const graph = (async () => {
    const { metafile } = await build({
      absWorkingDir: repoRoot,
      stdin: {
        contents: roots
          .flatMap((folder) => sourceFiles(folder))
          .map((file) => `import './${file}';`)
          .join('\n'),
        resolveDir: repoRoot,
        loader: 'ts',
      },
      bundle: true,
      write: false,
      outdir: 'out',
      platform: 'node',
      format: 'esm',
      packages: 'external',
      metafile: true,
      logLevel: 'silent',
    });
    const result = new Map<string, SourceImports>();
    for (const [file, input] of Object.entries(metafile.inputs)) {
      if (!roots.some((folder) => file.startsWith(`${folder}/`))) continue;
      result.set(file, {
        files: input.imports.filter((entry) => !entry.external).map((entry) => entry.path),
        packages: input.imports.filter((entry) => entry.external).map((entry) => entry.path),
      });
    }
    return result;
  })();
  graphs.set(key, graph);
  return graph;
};

/**
 * The repository files `file` names in its import and export statements, type-only ones included (what a
 * reader sees, unlike importGraph's runtime imports). Paths as sourceFiles gives them, without extension.
 */
export const importedPaths = (file: string): string[] => {
  const text = readFileSync(path.join(repoRoot, file), 'utf8');
  const specifiers = [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(?\s*)['"](\.{1,2}\/[^'"]*)['"]/g)].map(
    (match) => match[1] as string,
  );
  return specifiers.map((specifier) =>
    path.posix.normalize(path.posix.join(path.posix.dirname(file), specifier)),
  );
};

/** The import cycles among `graph`'s files: each as the files along it, starting and ending at the same one. */
export const importCycles = (imports: ReadonlyMap<string, SourceImports>): string[][] => {
  const cycles: string[][] = [];
  const done = new Set<string>();
  const visit = (file: string, trail: string[]) => {
    const at = trail.indexOf(file);
    if (at >= 0) {
      cycles.push([...trail.slice(at), file]);
      return;
    }
    if (done.has(file)) return;
    for (const next of imports.get(file)?.files ?? []) visit(next, [...trail, file]);
    done.add(file);
  };
  for (const file of imports.keys()) visit(file, []);
  return cycles;
};

/** A file's code as it runs: types and comments gone (esbuild's TypeScript loader; on one line). */
export const codeOf = (file: string): string =>
  transformSync(readFileSync(path.join(repoRoot, file), 'utf8'), {
    loader: 'ts',
    format: 'esm',
    minifyWhitespace: true,
  }).code;
