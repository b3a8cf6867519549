/**
 * docs/client.md shows the framework examples the Chromium tests run (test/e2e/client-frameworks.test.ts): each
 * file of client/examples/ that an app would write is one of the page's code blocks, character for character.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../../../local/lambda/runner';

const EXAMPLES = join(REPO_ROOT, 'client', 'examples');
const docs = readFileSync(join(REPO_ROOT, 'docs', 'client.md'), 'utf8');
const blocks = [...docs.matchAll(/^```[a-z]*\n([\s\S]*?)^```$/gm)].map((match) => match[1]);
/** What only the type checker and the tests need: the examples' tsconfig and the `.svelte` module declaration. */
const files = readdirSync(EXAMPLES).filter((file) => file !== 'tsconfig.json' && !file.endsWith('.d.ts'));

describe('docs/client.md and client/examples/', () => {
  it('finds the plain HTML, React, Vue and Svelte examples', () => {
    expect(files.sort()).toEqual(['Inbox.svelte', 'plain.html', 'react.tsx', 'svelte.ts', 'vue.ts']);
  });

  it.each(files)('shows %s as it is', (file) => {
    expect(blocks).toContain(readFileSync(join(EXAMPLES, file), 'utf8'));
  });
});
