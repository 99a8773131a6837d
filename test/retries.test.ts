import { describe, expect, it } from 'vitest';
import { eventLog, project, spawnTroupe, troupeJson, waitFor } from './support/troupe.js';

const pipeline = (retry: string) =>
  `agents:\n  - id: dev\n    runtime: claude\n${retry ? `    retry: ${retry}\n` : ''}`;
const attempts = (dir: string, id: string) =>
  eventLog(dir, id).flatMap((e) => (e.type === 'stage_started' ? [e.data.attempt] : []));

describe('runtime retries (the real binary)', () => {
  it('retries a timeout and an overload after a backoff, then carries on', async () => {
    const dir = project({
      'p.yaml': pipeline('{backoff: 0.2}'),
      's.yaml': 'agents:\n  dev: [{error: timeout}, {error: overloaded}, "done"]\n',
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(json.error).toBeNull();
    expect(code).toBe(0);
    expect(json.stages.map((s) => s.output)).toEqual(['done']);
    expect(attempts(dir, json.id)).toEqual([1, 2, 3]);
  });

  it('fails with the kind once the attempts are used up (exit 4 for a timeout); auth is never retried', async () => {
    const dir = project({
      'p.yaml': pipeline('{backoff: 0}'),
      'timeouts.yaml': 'agents:\n  dev: [{error: timeout}]\n',
      'auth.yaml': 'agents:\n  dev: [{error: auth}, "never"]\n',
    });
    const timedOut = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 'timeouts.yaml']);
    expect(timedOut.code).toBe(4);
    expect(timedOut.json.error).toMatch(/failed after 3 attempts: scripted timeout/);
    expect(attempts(dir, timedOut.json.id)).toEqual([1, 2, 3]);
    const denied = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 'auth.yaml']);
    expect(denied.json.status).toBe('failed');
    expect(denied.json.error).toMatch(/^agent 'dev' failed: scripted auth/);
    expect(attempts(dir, denied.json.id)).toEqual([1]);
  });

  it('a backoff outlives the process: killed while it waits, resume starts the retry no sooner', async () => {
    const dir = project({
      'p.yaml': pipeline('{backoff: 1.5}'),
      's.yaml': 'agents:\n  dev: [{error: network}, "done"]\n',
    });
    const child = spawnTroupe(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const id = await waitFor(() => /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1]);
    const failed = await waitFor(() => eventLog(dir, id).find((e) => e.type === 'stage_attempt_failed'));
    child.kill('SIGKILL');
    await child;
    const resumed = await troupeJson(dir, ['resume', id]);
    expect(resumed.json.status).toBe('completed');
    const [first, retry] = eventLog(dir, id).filter((e) => e.type === 'stage_started');
    expect(Date.parse(retry!.at)).toBeGreaterThanOrEqual(Date.parse(String(failed.data.retryAt)));
    // the backoff was recorded: retryAt is 1.5 s after the failure, so after the attempt began
    expect(Date.parse(String(failed.data.retryAt)) - Date.parse(first!.at)).toBeGreaterThanOrEqual(1500);
  });
});
