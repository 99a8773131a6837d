import { afterEach, describe, expect, it, vi } from 'vitest';
import { openProject } from '../../app/project.js';
import { Exit } from '../exit-codes.js';
import { decide } from './decide.js';
import { capturedIo, GATED_PIPELINE, runScriptedTask, scratchProject } from './testing.js';

describe('approve, reject, human-input', () => {
  // the task runs on in the foreground, which reports on the terminal as `troupe run` does
  afterEach(() => void vi.restoreAllMocks());
  const quiet = () => {
    vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
  };

  it('approve records the verdict and carries the task on to its end', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    quiet();
    expect(await decide(id, { kind: 'approve', reason: 'fine' }, { json: true }, capturedIo(root))).toBe(
      Exit.ok,
    );
    const state = openProject(root).tasks.state(id);
    expect(state.status).toBe('completed');
  });

  it('reject sends the agent back with the reason, and the task waits at the gate again', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    quiet();
    const code = await decide(id, { kind: 'reject', reason: 'too short' }, { json: true }, capturedIo(root));
    const state = openProject(root).tasks.state(id);
    expect([code, state.status, state.stages.length]).toEqual([Exit.actionRequired, 'awaiting_gate', 2]);
  });

  it('refuses an answer to a task that asks no question', async () => {
    const root = scratchProject(GATED_PIPELINE);
    const id = await runScriptedTask(root);
    await expect(decide(id, { kind: 'answer', answer: 'yes' }, {}, capturedIo(root))).rejects.toThrow(id);
  });
});
