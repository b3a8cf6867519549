import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/paths';
import { wiring } from '../../lib/wiring';
import { codeOf, importCycles, importedPaths, importGraph, sourceFiles } from '../support/source-graph';

/**
 * The project's own rules for the code under lambdas/ (docs/design.md), checked on the code as
 * esbuild reads it: runtime imports from its metafile, and each file's code without types and comments.
 */
const handlers = sourceFiles('lambdas/handlers');

describe('handlers', () => {
  it.each(handlers)(
    '%s sends through core/sqs-send, loops over no batch and holds no schema',
    async (file) => {
      const imports = (await importGraph()).get(file);
      expect(imports?.packages).not.toContain('@aws-sdk/client-sqs');
      expect(imports?.packages).not.toContain('zod');
      expect(imports?.files).not.toContain('lambdas/core/zod.ts');
      const code = codeOf(file);
      expect(code).not.toMatch(/\.Records\b/);
      expect(code).not.toMatch(/\b(for|while)\s*\(/);
    },
  );

  it.each(
    wiring.workers.map((worker) => [
      worker.handler,
      worker.invokedAsync ? 'queueAndInvokedWorker' : 'sqsWorker',
      worker.id,
    ]),
  )('%s is the %s of worker %s, given its queue', async (file, wrapper, id) => {
    expect((await importGraph()).get(file)?.files).toContain('lambdas/core/workers.ts');
    expect(codeOf(file)).toMatch(
      new RegExp(`${wrapper}\\(\\s*"${id.replaceAll('.', '\\.')}",\\s*\\w+Queue,`),
    );
  });

  it('every WebSocket route of the wiring is a webSocketRoute, $connect and $disconnect included', async () => {
    const graph = await importGraph();
    const wrapped = (file: string): boolean => {
      const imports = graph.get(file)?.files ?? [];
      return (
        imports.includes('lambdas/core/websocket-route.ts') ||
        (imports.includes('lambdas/handlers/ws/frame.ts') && wrapped('lambdas/handlers/ws/frame.ts'))
      );
    };
    const routes = wiring.webSocketRoutes.map((route) => route.handler);
    expect(routes).toContain('lambdas/handlers/ws/connect.ts');
    expect(routes.filter((file) => !wrapped(file))).toEqual([]);
  });

  it.each((wiring.busFunctions ?? []).map((fn) => [fn.handler, fn.id]))(
    '%s is the busWorker of bus function %s',
    (file, id) => {
      expect(codeOf(file)).toMatch(new RegExp(`busWorker\\(\\s*"${id.replaceAll('.', '\\.')}"`));
    },
  );
});

describe('queue messages', () => {
  /** The files that parse JSON, each for what it reads: no queue message outside the worker wrapper's reader. */
  const JSON_READERS: Record<string, string> = {
    'lambdas/core/message-queue.ts': 'queue message bodies, for the worker wrapper (core/workers.ts)',
    'lambdas/core/http/route.ts': 'HTTP request bodies, and the route declaration in its environment',
    'lambdas/core/auth/introspection.ts': "the introspection endpoint's answers",
    'lambdas/core/source-mapped-stacks.ts': "the bundle's source map",
    'lambdas/domain/realtime/client-frames.ts': 'WebSocket frames from clients',
    'lambdas/domain/realtime/sessions.ts': 'frames stored for a detached session',
    'lambdas/domain/realtime/presence.ts': 'paging cursors',
    'lambdas/domain/webhooks/delivery-admin.ts': 'paging cursors',
    'lambdas/domain/idempotency.ts': 'the response kept for an idempotent replay, as its JSON text',
    'lambdas/domain/push/apns.ts': "APNs's error answers ({reason, timestamp})",
    'lambdas/domain/push/fcm.ts': "the service-account JSON, and FCM's and Google's token endpoint's answers",
    'lambdas/domain/push/credentials.ts': 'the push credentials a Secrets Manager secret holds',
  };

  it('are parsed only by the worker wrapper, with their queue’s schema (JSON.parse elsewhere reads no message)', () => {
    const parsers = sourceFiles('lambdas').filter((file) => /\bJSON\.parse\b/.test(codeOf(file)));
    expect(parsers).toEqual(Object.keys(JSON_READERS).sort());
    expect(codeOf('lambdas/core/workers.ts')).toMatch(/readMessage\(/);
  });

  it('of several kinds are declared as their kinds, told apart by `kind` without a union (none in any bundle)', () => {
    const unions = sourceFiles('lambdas').filter((file) => /\bdiscriminatedUnion\(/.test(codeOf(file)));
    expect(unions).toEqual([]);
  });
});

describe('channel names', () => {
  const CHANNEL_MODULE = 'lambdas/domain/realtime/channel-names.ts';
  /**
   * A string that starts with a channel kind, a template that puts a name after one, or a pattern naming the
   * kinds (a backtick inside a string is Markdown in a description, not a template).
   */
  const CHANNEL_LITERAL = /["'](user|room|topic):|`(user|room|topic):\$\{|\/\^\(?(user|room|topic)\b/g;
  /** Keys that share a prefix with channels but are none (kept as they are stored). */
  const NOT_CHANNELS: Record<string, string> = {
    'lambdas/domain/preferences/preferences.ts': 'the preferences table keys a user item `user:<id>`',
    'local/demo/app.ts': 'a browser page on the client SDK, which keeps its own copy (it ships apart)',
  };

  it('are built, parsed and checked only in the channel module', () => {
    const offenders = [...sourceFiles('lambdas'), ...sourceFiles('local')]
      .filter((file) => file !== CHANNEL_MODULE && !(file in NOT_CHANNELS))
      .flatMap((file) => [...codeOf(file).matchAll(CHANNEL_LITERAL)].map((match) => `${file}: ${match[0]}`));
    expect(offenders).toEqual([]);
    expect(codeOf(CHANNEL_MODULE)).toMatch(/user/);
  });
});

describe('DynamoDB Query paging', () => {
  it('passes LastEvaluatedKey on as ExclusiveStartKey only in core/paging.ts', () => {
    const offenders = sourceFiles('lambdas').filter(
      (file) =>
        file !== 'lambdas/core/paging.ts' && /\b(ExclusiveStartKey|LastEvaluatedKey)\b/.test(codeOf(file)),
    );
    expect(offenders).toEqual([]);
  });
});

describe('shared helpers', () => {
  const definers = (name: string) =>
    sourceFiles('lambdas').filter((file) =>
      new RegExp(`\\b(const|let|var|function\\*?)\\s*${name}\\b`).test(codeOf(file)),
    );

  it.each([
    ['forEachLimited', 'lambdas/core/concurrency.ts'],
    ['queryAll', 'lambdas/core/paging.ts'],
    ['countQuery', 'lambdas/core/paging.ts'],
    ['shardNames', 'lambdas/domain/realtime/config.ts'],
    ['shardOf', 'lambdas/domain/realtime/config.ts'],
    ['liveItemTtl', 'lambdas/domain/realtime/tables.ts'],
  ])('%s is defined once, in %s', (name, home) => {
    expect(definers(name)).toEqual([home]);
  });

  it('a live item TTL (the connection limit plus a margin) is computed in one place', () => {
    const users = sourceFiles('lambdas').filter((file) => /\bMAX_CONNECTION_SECS\b/.test(codeOf(file)));
    expect(users).toEqual(['lambdas/domain/realtime/config.ts', 'lambdas/domain/realtime/tables.ts']);
  });
});

describe('imports', () => {
  it('form no cycle under lambdas/ (a module is read before the ones it needs are complete)', async () => {
    expect(importCycles(await importGraph())).toEqual([]);
  });

  it('run request → plan → delivery: the delivery module imports neither the create path nor the fan-out worker', async () => {
    const graph = await importGraph();
    const imports = graph.get('lambdas/domain/notifications/delivery.ts')?.files;
    expect(imports).toContain('lambdas/domain/notifications/model.ts'); // the graph sees its imports
    expect(imports).not.toContain('lambdas/domain/notifications/create.ts');
    expect(imports).not.toContain('lambdas/domain/notifications/fanout.ts');
    // Type-only imports are erased from the graph: the source names neither module either.
    expect(readFileSync(path.join(repoRoot, 'lambdas/domain/notifications/delivery.ts'), 'utf8')).not.toMatch(
      /from\s+['"]\.\/(create|fanout)['"]/,
    );
    for (const deliverer of ['create.ts', 'fanout.ts']) {
      expect(graph.get(`lambdas/domain/notifications/${deliverer}`)?.files).toContain(
        'lambdas/domain/notifications/delivery.ts',
      );
    }
    expect(graph.get('lambdas/domain/notifications/create.ts')?.files).not.toContain(
      'lambdas/domain/notifications/fanout.ts',
    );
  });

  it('form no cycle across lambdas/, lib/ and common/', async () => {
    expect(importCycles(await importGraph('lambdas', 'lib', 'common'))).toEqual([]);
  });

  /** Files under `from` that name a file under one of `into` in an import or export, type-only ones included. */
  const importsInto = (from: string, into: readonly string[]) =>
    sourceFiles(from).flatMap((file) =>
      importedPaths(file)
        .filter((target) => into.some((folder) => target.startsWith(`${folder}/`)))
        .map((target) => `${file} -> ${target}`),
    );

  it('run one way between lib/ and lambdas/: the functions read the wiring; the stack imports no function code', () => {
    expect(importsInto('lib', ['lambdas'])).toEqual([]);
    // Of lib/, the functions read only the wiring declaration (routes, access rules), never the stack's constructs.
    expect(
      sourceFiles('lambdas').flatMap((file) =>
        importedPaths(file)
          .filter((target) => target.startsWith('lib/') && !/^lib\/wiring(\/|$)/.test(target))
          .map((target) => `${file} -> ${target}`),
      ),
    ).toEqual([]);
  });

  it('into common/ only: what both sides need (environment names, settings, error body, metric names, limits) imports neither side', async () => {
    expect(importsInto('common', ['lambdas', 'lib'])).toEqual([]);
    // Every function bundles it: no package (zod, the SDK) rides along.
    const packages = [...(await importGraph('common')).entries()].filter(
      ([, imports]) => imports.packages.length > 0,
    );
    expect(packages).toEqual([]);
  });

  it('would show an import of lambdas/ from lib/', () => {
    // The check reads the import statements: the stack's own entry point imports lib/ files.
    expect(importedPaths('lib/app.ts').some((target) => target.startsWith('lib/'))).toBe(true);
  });

  it('would show a cycle', () => {
    const graph = new Map([
      ['a.ts', { files: ['b.ts'], packages: [] }],
      ['b.ts', { files: ['c.ts'], packages: [] }],
      ['c.ts', { files: ['a.ts'], packages: [] }],
    ]);
    expect(importCycles(graph)).toEqual([['a.ts', 'b.ts', 'c.ts', 'a.ts']]);
  });
});

describe('settings', () => {
  it('name each environment variable once, in common/env.ts or common/env-names.ts: no other code spells a NOTIFY_ or SERVICE__ name', () => {
    const spelled = /['"`](?:NOTIFY_|SERVICE__)[A-Z0-9_]*/;
    const declaring = ['common/env.ts', 'common/env-names.ts'];
    const offenders = [...sourceFiles('lambdas'), ...sourceFiles('lib'), ...sourceFiles('common')].filter(
      (file) => !declaring.includes(file) && spelled.test(codeOf(file)),
    );
    expect(offenders).toEqual([]);
    // The check reads the names where they are declared.
    for (const file of declaring) expect(spelled.test(codeOf(file))).toBe(true);
  });

  it('import the resource names in function code as a namespace of common/env-names.ts, so a bundle carries only those it reads', async () => {
    // `export * as envNames` (common/env.ts, for lib/ and the tools) makes an object of every name in the bundle.
    const throughObject = [...(await importGraph()).entries()]
      .filter(([file]) => file.startsWith('lambdas/') || file.startsWith('common/'))
      .filter(([file]) => file !== 'common/env.ts' && /\benvNames\b/.test(codeOf(file)))
      .filter(([file]) => !/import\s*\*\s*as\s+envNames\s*from\s*"[^"]*env-names"/.test(codeOf(file)))
      .map(([file]) => file);
    expect(throughObject).toEqual([]);
  });
});

describe('dead code', () => {
  /** Code that may use an export of lambdas/: the service, its tools, and the tests. */
  const USERS = ['lambdas', 'common', 'lib', 'local', 'api-docs', 'bench', 'smoke', 'bin', 'test'];
  const IMPORTS = /import\s*\{([^}]*)\}\s*from\s*"[^"]*";?/g;
  /** esbuild gathers a module's exports, re-exports too, into one `export { a, b as c };` at its end. */
  const EXPORTS = /export\s*\{([^}]*)\}\s*;?/g;
  const entries = (code: string, pattern: RegExp) =>
    [...code.matchAll(pattern)].flatMap((match) =>
      (match[1] as string)
        .split(',')
        .map((entry) => entry.trim().split(/\s+as\s+/))
        .filter((names) => names[0])
        .map(([name, alias]) => ({ name: name as string, alias: alias ?? (name as string) })),
    );
  const mentions = (text: string, name: string) =>
    (text.match(new RegExp(`(?<![\\w$])${name.replace(/\$/g, '\\$')}(?![\\w$])`, 'g')) ?? []).length;

  it('leaves no export under lambdas/ or common/ that nothing uses (passing a name on is no use)', () => {
    const modules = USERS.flatMap((folder) => sourceFiles(folder)).map((file) => {
      const code = codeOf(file);
      return {
        file,
        imports: entries(code, IMPORTS),
        exports: entries(code, EXPORTS),
        body: code.replace(IMPORTS, '').replace(EXPORTS, ''),
      };
    });
    const usedElsewhere = (file: string, name: string) =>
      modules.some(
        (module) =>
          module.file !== file &&
          (mentions(module.body, name) > 0 ||
            module.imports.some((entry) => entry.name === name && mentions(module.body, entry.alias) > 0)),
      );
    const unused = modules
      .filter((module) => module.file.startsWith('lambdas/') || module.file.startsWith('common/'))
      .flatMap((module) =>
        module.exports
          // Its own definitions: re-exported imports are judged where they are defined.
          .filter((entry) => !module.imports.some((imported) => imported.alias === entry.name))
          .filter((entry) => entry.alias !== 'handler' && mentions(module.body, entry.name) <= 1)
          .filter((entry) => !usedElsewhere(module.file, entry.alias))
          .map((entry) => `${module.file}: ${entry.alias}`),
      );
    expect(unused).toEqual([]);
  });
});

describe('the Lambda client', () => {
  it('is the ops tool’s alone: no file under lambdas/ imports @aws-sdk/client-lambda (its client class is ≈ 70 KiB; the hand-off to a worker signs its one call itself)', async () => {
    const importers = [...(await importGraph()).entries()]
      .filter(([, imports]) => imports.packages.includes('@aws-sdk/client-lambda'))
      .map(([file]) => file);
    expect(importers).toEqual([]);
    expect(codeOf('lambdas/core/worker-invoke.ts')).toMatch(/"x-amz-invocation-type":"Event"/);
    // The check sees package imports at all (the SDK's DynamoDB client is imported by the core clients).
    expect(
      [...(await importGraph()).values()].some((imports) =>
        imports.packages.includes('@aws-sdk/client-dynamodb'),
      ),
    ).toBe(true);
  });
});
