import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { repoRoot } from '../../lib/paths';

// docs/design.md principle 10: the docs hold the contract; nothing points at a sibling folder or another machine.
const OUTSIDE = /\.\.\/shared\b|(?<![\w.])\/(?:work|home|Users|root)\/[\w.-]/;

describe('the repository stands alone', () => {
  it('no tracked file refers to ../shared or to an absolute path of a machine', () => {
    const files = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' })
      .split('\0')
      .filter((file) => file && file !== 'package-lock.json' && file !== 'test/unit/standalone.test.ts');
    const offending = files.flatMap((file) => {
      let text: string;
      try {
        text = readFileSync(join(repoRoot, file), 'utf8');
      } catch {
        return []; // listed but absent (e.g. deleted in the work tree)
      }
      return text
        .split('\n')
        .flatMap((line, index) => (OUTSIDE.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : []));
    });
    expect(offending).toEqual([]);
  });

  it('the pattern catches what it is for', () => {
    expect(OUTSIDE.test('see ../shared/spec/contract.md')).toBe(true);
    expect(OUTSIDE.test('Source: /work/shared/reference/x.md')).toBe(true);
    expect(OUTSIDE.test('path /home/alice/notify')).toBe(true);
    expect(OUTSIDE.test('GET /api/v1/openapi.json and docs/contract.md')).toBe(false);
  });
});
