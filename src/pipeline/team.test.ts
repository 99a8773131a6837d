import { describe, expect, it } from 'vitest';
import { type CliFound, proposeTeam } from './team.js';

const cli = (runtime: CliFound['runtime'], ready = true, installed = true): CliFound => ({
  runtime,
  ready,
  installed,
});

describe('proposeTeam', () => {
  it('scripted when no CLI is there', () => {
    expect(proposeTeam([])).toMatchObject({ writer: 'scripted', reviewer: 'scripted' });
    expect(proposeTeam([cli('claude', false, false)])).toMatchObject({ writer: 'scripted' });
  });

  it('one CLI does both roles', () => {
    expect(proposeTeam([cli('gemini')])).toMatchObject({ writer: 'gemini', reviewer: 'gemini' });
  });

  it('Claude writes and Gemini reviews when both are there, whatever else is', () => {
    expect(proposeTeam([cli('codex'), cli('gemini'), cli('claude')])).toMatchObject({
      writer: 'claude',
      reviewer: 'gemini',
    });
    expect(proposeTeam([cli('claude'), cli('codex')])).toMatchObject({ writer: 'claude', reviewer: 'codex' });
  });

  it('prefers the CLIs that can run headless, else falls back to the installed ones', () => {
    expect(proposeTeam([cli('claude', false), cli('codex')])).toMatchObject({
      writer: 'codex',
      reviewer: 'codex',
    });
    const team = proposeTeam([cli('claude', false), cli('gemini', false)]);
    expect(team).toMatchObject({ writer: 'claude', reviewer: 'gemini' });
    expect(team.reason).toContain('not ready');
  });

  it('what was asked for wins: first writes, second reviews', () => {
    expect(proposeTeam([], ['codex'])).toMatchObject({ writer: 'codex', reviewer: 'codex' });
    expect(proposeTeam([cli('claude')], ['gemini', 'claude'])).toMatchObject({
      writer: 'gemini',
      reviewer: 'claude',
    });
  });
});
