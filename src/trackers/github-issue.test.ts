import { describe, expect, it } from 'vitest';
import { blockerRef, blockersInBody, priorityOf, restIssue } from './github-issue.js';

describe('a GitHub issue read', () => {
  it('takes its priority from labels, the most urgent when several say', () => {
    expect(priorityOf(['priority: 1'])).toBe(1);
    expect(priorityOf(['Priority:3'])).toBe(3);
    expect(priorityOf(['priority/2'])).toBe(2);
    expect(priorityOf(['priority-4'])).toBe(4);
    expect(priorityOf(['P2', 'p1'])).toBe(1);
    expect(priorityOf(['p0'])).toBe(1);
    expect(priorityOf(['priority: high'])).toBe(2);
    expect(priorityOf(['priority: low', 'bug'])).toBe(4);
    expect(priorityOf(['bug', 'p5', 'priority: someday', 'api1', 'p10'])).toBeNull();
    expect(priorityOf([])).toBeNull();
  });

  it('finds `blocked by` and `depends on` lines in a body, not other mentions', () => {
    expect(blockersInBody('Blocked by #3\n- depends on #4, #5 and #6\n**Depends on:** #7')).toEqual([
      3, 4, 5, 6, 7,
    ]);
    expect(blockersInBody('See #2. This is not blocked by anything.\nfixes #9')).toEqual([]);
    expect(blockersInBody('blocked by #3\nblocked by #3')).toEqual([3]);
    expect(blockersInBody('blocked by owner/repo#3')).toEqual([]);
  });

  it('names a blocker of another repository with its repository', () => {
    const issue = (repository: string) =>
      restIssue.parse({
        number: 4,
        title: 't',
        state: 'open',
        labels: [],
        repository_url: `https://api.github.com/repos/${repository}`,
      });
    expect(blockerRef(issue('Octo/Repo'), 'octo/repo', null)).toEqual({
      id: '4',
      identifier: '#4',
      state: 'open',
    });
    expect(blockerRef(issue('octo/other'), 'octo/repo', null)).toEqual({
      id: 'octo/other#4',
      identifier: 'octo/other#4',
      state: 'open',
    });
  });
});
