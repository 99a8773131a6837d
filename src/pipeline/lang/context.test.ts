import { describe, expect, it } from 'vitest';
import {
  type ContextStage,
  extractReport,
  formatAgentNotesSection,
  formatHumanSection,
  formatStageSection,
  readForStrategy,
  readSmart,
  splitSections,
  stripCliArtifacts,
} from './context.js';

const AT = '2026-03-27T10:00:00+00:00';

function stage(n: number, over: Partial<ContextStage> = {}): ContextStage {
  return {
    n,
    agent: `agent_${n}`,
    taskName: 'execute',
    status: 'completed',
    input: `input ${n}`,
    output: `output ${n}`,
    at: AT,
    ...over,
  };
}

const contextOf = (...stages: ContextStage[]) => stages.map(formatStageSection).join('');

describe('formatStageSection', () => {
  it('writes the aqm section exactly, ending with a rule and a blank line', () => {
    expect(formatStageSection(stage(1, { agent: 'planner', taskName: 'plan' }))).toBe(
      '## [stage 1] planner — plan\n' +
        `**Status**: completed | ${AT}\n` +
        '\n### Input\ninput 1\n\n### Output\noutput 1\n\n---\n\n',
    );
  });

  it('adds the reject reason line only when there is one', () => {
    const rejected = formatStageSection(stage(2, { status: 'rejected', rejectReason: 'no tests' }));
    expect(rejected).toContain(`**Status**: rejected | ${AT}\n**reject_reason**: no tests\n\n### Input\n`);
    expect(formatStageSection(stage(2, { rejectReason: '' }))).not.toContain('reject_reason');
  });
});

describe('formatHumanSection', () => {
  it('lists the questions and the answer', () => {
    expect(
      formatHumanSection({
        agent: 'dev',
        questions: ['Which DB?', 'Which port?'],
        answer: 'sqlite, 8080',
        at: AT,
      }),
    ).toBe(
      `## [human input] for dev\n**Time**: ${AT}\n\n### Question\n- Which DB?\n- Which port?\n\n` +
        '### User Response\nsqlite, 8080\n\n---\n\n',
    );
  });
});

describe('formatAgentNotesSection', () => {
  it('keeps only the report of the output', () => {
    expect(formatAgentNotesSection(3, AT, 'I looked around.\n```\nREPORT\n```\nDone.')).toBe(
      `## [stage 3]\n**Time**: ${AT}\n\nREPORT\n\n---\n\n`,
    );
  });
});

describe('extractReport', () => {
  it('joins the bodies of fenced blocks with blank lines', () => {
    expect(extractReport('intro\n```json\n{"a": 1}\n```\nmiddle\n```\n  second  \n```\nend')).toBe(
      '{"a": 1}\n\nsecond',
    );
  });

  it('keeps the whole output when there are no fences, or only empty ones', () => {
    expect(extractReport('plain text\n')).toBe('plain text\n');
    expect(extractReport('a\n```\n\n```\nb')).toBe('a\n```\n\n```\nb');
  });

  it('needs the fences at the start of a line', () => {
    expect(extractReport('inline ```x``` text')).toBe('inline ```x``` text');
  });
});

describe('stripCliArtifacts', () => {
  it("drops claude's tool-progress lines, collapses blank runs and trims", () => {
    const raw = '\n▶ Read file.ts\n  ⎿ 20 lines\nResult:\n\n\n  \nline\n✓ Tests pass\n✗ lint\nend\n\n';
    expect(stripCliArtifacts(raw)).toBe('Result:\n\nline\nend');
  });

  it('keeps lines where the marker is not followed by a space or not first', () => {
    expect(stripCliArtifacts('▶x\nsee ✓ here')).toBe('▶x\nsee ✓ here');
  });
});

describe('splitSections', () => {
  it('splits at section boundaries only, so a `---` inside an output stays in its section', () => {
    const md = contextOf(stage(1, { output: 'front\n---\nmatter\n\n---\n\nafter a rule' }), stage(2));
    const sections = splitSections(md);
    expect(sections).toHaveLength(2);
    expect(sections[0]).toContain('front\n---\nmatter\n\n---\n\nafter a rule');
    expect(sections[1]).toMatch(/^## \[stage 2\][\s\S]*output 2$/);
  });

  it('treats a human-input exchange as a section', () => {
    const md =
      formatStageSection(stage(1)) +
      formatHumanSection({ agent: 'dev', questions: ['q'], answer: 'a', at: AT });
    expect(splitSections(md).map((s) => s.split('\n')[0])).toEqual([
      '## [stage 1] agent_1 — execute',
      '## [human input] for dev',
    ]);
  });

  it('is empty for an empty file', () => {
    expect(splitSections('')).toEqual([]);
  });
});

describe('readSmart', () => {
  it('returns the file unchanged for window 0, an empty file, or no more sections than the window', () => {
    const md = contextOf(stage(1), stage(2));
    expect(readSmart(md, 0)).toBe(md);
    expect(readSmart('', 3)).toBe('');
    expect(readSmart(md, 2)).toBe(md);
  });

  it('reduces older sections to history lines and keeps the last `window` in full', () => {
    const md = contextOf(stage(1, { agent: 'planner', status: 'approved' }), stage(2), stage(3));
    expect(readSmart(md, 2)).toBe(
      '[history]\n- [stage 1] planner(approved): output 1\n\n[recent]\n' +
        `## [stage 2] agent_2 — execute\n**Status**: completed | ${AT}\n\n### Input\ninput 2\n\n### Output\noutput 2` +
        '\n---\n' +
        `## [stage 3] agent_3 — execute\n**Status**: completed | ${AT}\n\n### Input\ninput 3\n\n### Output\noutput 3`,
    );
  });

  it('previews the first line that is not bold or a heading, cut to 120 with … when the output is longer', () => {
    const long = `# Title\n**Bold**: x\n\n${'a'.repeat(130)}`;
    const short = '## Plan\nshort first line\nand a long tail '.padEnd(200, 'z');
    const md = contextOf(stage(1, { output: long }), stage(2, { output: short }), stage(3));
    const history = readSmart(md, 1).split('\n');
    expect(history[1]).toBe(`- [stage 1] agent_1(completed): ${'a'.repeat(120)}…`);
    expect(history[2]).toBe('- [stage 2] agent_2(completed): short first line…');
  });

  it('previews a fenced output by its fence line, and an output of only headings by its start', () => {
    const md = contextOf(
      stage(1, { output: '```\ncode\n```' }),
      stage(2, { output: '# Only a heading' }),
      stage(3),
    );
    const history = readSmart(md, 1).split('\n');
    expect(history[1]).toBe('- [stage 1] agent_1(completed): ```');
    expect(history[2]).toBe('- [stage 2] agent_2(completed): # Only a heading');
  });

  it('summarises a human-input exchange by its answer', () => {
    const md =
      formatHumanSection({ agent: 'dev', questions: ['Which DB?'], answer: 'sqlite please', at: AT }) +
      contextOf(stage(2));
    expect(readSmart(md, 1).split('\n')[1]).toBe('- [human input] dev(answered): sqlite please');
  });

  it('copes with text that is not in the section format', () => {
    const md = `preamble\n\n---\n\n${contextOf(stage(1))}`;
    expect(readSmart(md, 1).split('\n')[1]).toBe('- [section] ?(): (no output)');
  });

  it('is not confused by `---` lines in outputs (aqm counted each fragment as a section)', () => {
    const md = contextOf(stage(1, { output: 'a\n---\nb\n---\nc' }), stage(2));
    expect(readSmart(md, 2)).toBe(md);
  });
});

describe('readForStrategy', () => {
  const md = contextOf(stage(1), stage(2, { output: 'last\n---\nwith a rule' }));
  const notes = formatAgentNotesSection(1, AT, 'my notes');

  it('none: nothing', () => {
    expect(readForStrategy('none', 3, md, notes, 'agent_2')).toBe('');
  });

  it('last_only: the whole last section, header to output, even when the output holds a `---` line', () => {
    expect(readForStrategy('last_only', 3, md, notes, 'agent_2')).toBe(
      `## [stage 2] agent_2 — execute\n**Status**: completed | ${AT}\n\n### Input\ninput 2\n\n### Output\nlast\n---\nwith a rule`,
    );
    expect(readForStrategy('last_only', 3, '', notes, 'agent_2')).toBe('');
  });

  it('own: the agent notes file', () => {
    expect(readForStrategy('own', 3, md, notes, 'agent_2')).toBe(notes);
  });

  it('shared: the smart-windowed context', () => {
    expect(readForStrategy('shared', 1, md, notes, 'agent_2')).toBe(readSmart(md, 1));
  });

  it('both: the smart-windowed context followed by the notes, when there are notes', () => {
    expect(readForStrategy('both', 3, md, notes, 'agent_2')).toBe(`${md}\n\n[notes:agent_2]\n${notes}`);
    expect(readForStrategy('both', 3, md, '', 'agent_2')).toBe(md);
  });
});
