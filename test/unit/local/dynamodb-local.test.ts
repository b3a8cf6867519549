import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('DynamoDB Local', () => {
  it('does not outlive a parent that is killed without cleaning up', async () => {
    const script = `import { startDynamoDbLocal } from './local/dynamodb-local';
const db = await startDynamoDbLocal();
console.log(db.pid);
process.kill(process.pid, 'SIGKILL');`;
    const output = await run(process.execPath, [
      '--import',
      'tsx',
      '--input-type=module',
      '-e',
      script,
    ]).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }));
    const javaPid = Number(output.stdout.trim().split('\n').at(-1));
    expect(javaPid).toBeGreaterThan(0);
    const deadline = Date.now() + 10_000;
    while (alive(javaPid) && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 200));
    expect(alive(javaPid)).toBe(false);
  });
});
