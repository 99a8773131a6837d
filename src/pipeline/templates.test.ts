import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { castTemplate, findTemplate, listTemplates } from './templates.js';

describe('built-in templates', () => {
  it('ships at least the four the docs name, each with a description and a script', () => {
    const names = listTemplates().map((t) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(['dev-review-deploy', 'design-session', 'fan-out-build', 'spec-first-feature']),
    );
    for (const t of listTemplates()) {
      expect(t.description).not.toBe('');
      expect(readFileSync(t.script, 'utf8')).toContain('agents:');
    }
  });

  it('an unknown name lists the templates there are', () => {
    expect(() => findTemplate('nope')).toThrow(/no template named "nope"/);
  });
});

describe('castTemplate', () => {
  const text = `# a team
agents:
  - id: dev
    runtime: claude # writes
    handoffs: [{ to: rev }]
  - id: rev
    runtime: gemini
    gate: { type: llm, runtime: claude }
  - id: other
    runtime: codex
`;

  it('fills the seats and changes nothing else', () => {
    expect(castTemplate(text, { writer: 'codex', reviewer: 'claude' })).toBe(
      text
        .replace('runtime: claude # writes', 'runtime: codex # writes')
        .replace('runtime: gemini', 'runtime: claude')
        .replace('runtime: claude }', 'runtime: codex }'),
    );
  });

  it('claude writing and gemini reviewing is the template itself', () => {
    expect(castTemplate(text, { writer: 'claude', reviewer: 'gemini' })).toBe(text);
  });
});
