import { describe, expect, it } from 'vitest';
import { defaultIsolation, isolationSummary } from './isolation.js';
import { loadPipelineText } from './load.js';

const load = (text: string) => loadPipelineText(text, '<inline>');
const agents = (...permissions: Array<string | null>) =>
  `agents:\n${permissions
    .map((p, i) => `  - id: a${i}\n    runtime: claude\n${p ? `    permissions: ${p}\n` : ''}`)
    .join('')}`;

describe('default isolation', () => {
  it('a worktree in a git repo when an agent may edit or do anything', () => {
    expect(defaultIsolation(load(agents('read_only', 'edit')), true)).toEqual({
      isolation: 'worktree',
      reason: 'agent a1 edits code',
    });
    expect(defaultIsolation(load(agents('full', 'edit')), true).reason).toBe('agents a0, a1 edit code');
  });

  it('in place outside a git repo, or when no agent declares edit or full', () => {
    expect(defaultIsolation(load(agents('edit')), false)).toEqual({
      isolation: 'none',
      reason: 'not in a git repository',
    });
    // no permissions: read_only outside a troupe worktree, so there is nothing to isolate
    expect(defaultIsolation(load(agents(null, 'read_only')), true)).toEqual({
      isolation: 'none',
      reason: 'no agent edits code',
    });
  });

  it('an inherited permission counts; an abstract agent does not', () => {
    const text = `agents:
  - id: base
    abstract: true
    runtime: claude
    permissions: edit
  - id: dev
    extends: base
`;
    expect(defaultIsolation(load(text), true).reason).toBe('agent dev edits code');
  });

  it('validate states it without knowing the directory; a workspace: mapping is what it says', () => {
    expect(isolationSummary(load(agents('edit')))).toBe('worktree in a git repo (agent a0 edits code)');
    expect(isolationSummary(load(agents('read_only')))).toBeNull();
    expect(isolationSummary(load(`workspace: {merge: manual}\n${agents(null)}`))).toBe('worktree isolation');
    expect(isolationSummary(load(`workspace: {isolation: none}\n${agents('edit')}`))).toBeNull();
  });
});
