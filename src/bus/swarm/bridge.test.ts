import { describe, expect, it } from 'vitest';
import { seenNow, taskChanges } from './bridge.js';
import type { TeamTask } from './tasks.js';

const t = (id: string, status: string, owner = '', blockedBy: string[] = []): TeamTask => ({
  id,
  subject: `task ${id}`,
  status,
  owner,
  blockedBy,
  file: `${id}.json`,
});
const me = { handle: 'codex', agentId: 'codex@squad' };

describe('taskChanges (the swarm bridge, pure)', () => {
  it('says nothing about the baseline, then names what changed for me', () => {
    const seen = seenNow([t('1', 'pending'), t('2', 'pending', '', ['1'])]);
    expect(taskChanges(seen, [t('1', 'pending'), t('2', 'pending', '', ['1'])], me)).toEqual([]);
    expect(
      taskChanges(seen, [t('1', 'in_progress', 'codex'), t('2', 'pending', '', ['1'])], me),
    ).toMatchObject([{ type: 'task_assigned', taskId: '1', details: 'owner=codex' }]);
    expect(
      taskChanges(
        seen,
        [t('1', 'completed', 'codex'), t('2', 'pending', '', ['1']), t('3', 'pending')],
        me,
      ).map((e) => [e.type, e.taskId]),
    ).toEqual([
      ['task_completed', '1'],
      ['task_unblocked', '2'],
      ['task_added', '3'],
    ]);
  });

  it("leaves out other members' tasks, and knows its agent id as well as its handle", () => {
    const seen = seenNow([t('1', 'pending'), t('2', 'pending')]);
    const events = taskChanges(
      seen,
      [t('1', 'in_progress', 'security'), t('2', 'in_progress', 'codex@squad')],
      me,
    );
    expect(events.map((e) => [e.type, e.taskId])).toEqual([['task_assigned', '2']]);
  });

  it('forgets removed tasks, so one added again under the same id is new', () => {
    const seen = seenNow([t('1', 'pending')]);
    expect(taskChanges(seen, [], me)).toEqual([]);
    expect(taskChanges(seen, [t('1', 'pending')], me).map((e) => e.type)).toEqual(['task_added']);
  });
});
