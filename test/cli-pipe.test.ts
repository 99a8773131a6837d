import { spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { bin } from './support/troupe.js';

describe('troupe writing to a reader that went away (`troupe list | head -1`)', () => {
  it('stops quietly with its own exit code, no EPIPE stack', async () => {
    const child = spawn('node', [bin, '--help'], { stdio: ['ignore', 'pipe', 'pipe'] });
    // the reader closes before troupe writes anything
    child.stdout.destroy();
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).toBe('');
    expect(code).toBe(0);
  });
});
