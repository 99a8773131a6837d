import { describe, expect, it } from 'vitest';
import { normalizeRouting } from '../pipeline/routing-config.js';
import { decideTier, onTier, type RouteContext, recommendTier, taskKind } from './route.js';

const routing = (extra: Record<string, unknown> = {}) =>
  normalizeRouting({
    tiers: {
      fast: { runtime: 'gemini', model: 'gemini-2.5-flash', effort: 'low' },
      mid: { runtime: 'claude', model: 'sonnet', effort: 'medium' },
      deep: { runtime: 'claude', model: 'opus', effort: 'high' },
    },
    ...extra,
  });

const ctx = (over: Partial<RouteContext> = {}): RouteContext => ({
  pipeline: 'p',
  agent: 'coder',
  size: 'M',
  labels: [],
  input: 'add a health endpoint',
  gated: false,
  forcedTier: null,
  budgetPressed: false,
  closed: new Map(),
  rejectedHere: [],
  ...over,
});

describe('recommendTier', () => {
  it('uses the first rule whose conditions all hold, else the default (the last tier)', () => {
    const r = routing({
      rules: [
        { tier: 'fast', size: ['s'], agents: 'coder' },
        { tier: 'mid', labels: ['docs'] },
        { tier: 'deep', keywords: ['Security'] },
      ],
    });
    expect(recommendTier(r, ctx({ size: 'S' }))).toEqual({
      tier: 'fast',
      reason: 'rule 1 (size S, agent coder)',
    });
    expect(recommendTier(r, ctx({ size: 'S', agent: 'reviewer' })).tier).toBe('deep');
    expect(recommendTier(r, ctx({ labels: ['docs'] })).reason).toBe('rule 2 (label docs)');
    expect(recommendTier(r, ctx({ input: 'fix the security hole' })).reason).toBe(
      'rule 3 (keyword "Security")',
    );
    // a keyword is a whole word: "insecurity" is not "security"
    expect(recommendTier(r, ctx({ input: 'insecurity' }))).toEqual({ tier: 'deep', reason: 'default tier' });
    expect(recommendTier(routing({ default: 'mid' }), ctx()).tier).toBe('mid');
  });

  it('refuses rules and defaults that name no tier', () => {
    expect(() => routing({ default: 'huge' })).toThrow(/no tier 'huge'/);
    expect(() => routing({ rules: [{ tier: 'tiny' }] })).toThrow(/no tier 'tiny'/);
  });
});

describe('decideTier', () => {
  const kind = taskKind('p', 'coder', 'M');

  it('takes the recommendation when nothing overrides it', () => {
    const d = decideTier(routing(), ctx(), {});
    expect(d).toMatchObject({ kind, tier: 'deep', overrides: [], reason: 'default tier' });
  });

  it('--tier wins over everything', () => {
    const d = decideTier(routing(), ctx({ forcedTier: 'fast', budgetPressed: true }), {
      fast: { approved: 0, rejected: 9 },
    });
    expect(d).toMatchObject({ tier: 'fast', overrides: ['--tier fast'] });
  });

  it('prefers the cheapest tier with a high approval rate for this kind of task', () => {
    const d = decideTier(routing(), ctx(), {
      fast: { approved: 2, rejected: 1 },
      mid: { approved: 5, rejected: 0 },
    });
    expect(d.tier).toBe('mid');
    expect(d.reason).toBe(`history: mid approved 5/5 for ${kind}`);
    // not before it has enough outcomes
    expect(decideTier(routing(), ctx(), { mid: { approved: 2, rejected: 0 } }).tier).toBe('deep');
  });

  it('moves off a tier that keeps being rejected for this kind of task', () => {
    const r = routing({ rules: [{ tier: 'fast' }] });
    const d = decideTier(r, ctx(), { fast: { approved: 1, rejected: 3 }, mid: { approved: 1, rejected: 1 } });
    expect(d.tier).toBe('mid');
    expect(d.overrides).toEqual([`history: fast rejected 3/4 for ${kind}`]);
  });

  it('explores an untried cheaper tier only for gated work, and not one rejected in this task', () => {
    expect(decideTier(routing(), ctx({ gated: false }), {}).tier).toBe('deep');
    const d = decideTier(routing(), ctx({ gated: true }), {});
    expect(d).toMatchObject({ tier: 'fast', reason: `exploring: fast has 0 of 3 outcomes for ${kind}` });
    const after = decideTier(routing(), ctx({ gated: true, rejectedHere: ['fast'] }), {});
    expect(after.tier).toBe('mid');
    expect(decideTier(routing({ learn: false }), ctx({ gated: true }), {}).tier).toBe('deep');
  });

  it('escalates past the deepest tier rejected in this task', () => {
    const d = decideTier(routing({ rules: [{ tier: 'fast' }] }), ctx({ rejectedHere: ['fast', 'mid'] }), {});
    expect(d).toMatchObject({ tier: 'deep', reason: 'escalated: mid was rejected in this task' });
  });

  it('drops to the cheapest tier once 80 % of the budget is used', () => {
    expect(decideTier(routing(), ctx({ budgetPressed: true }), {})).toMatchObject({
      tier: 'fast',
      reason: 'budget: 80 % used, the cheapest tier',
    });
  });

  it('moves off a closed provider to an open tier, deeper first', () => {
    const r = routing({ default: 'mid' });
    const claude = { mid: 'claude', deep: 'claude' };
    const closed = (tiers: Record<string, string>) => ctx({ closed: new Map(Object.entries(tiers)) });
    expect(decideTier(r, closed(claude), {})).toMatchObject({
      tier: 'fast',
      reason: 'window: claude is closed, fast is open',
    });
    expect(decideTier(routing({ default: 'fast' }), closed({ fast: 'gemini' }), {}).tier).toBe('mid');
    // every tier closed: the decision stands and the stage waits for the reset
    expect(decideTier(r, closed({ ...claude, fast: 'gemini' }), {}).tier).toBe('mid');
  });
});

describe('onTier', () => {
  const node = { runtime: 'codex', model: 'auto', effort: null as string | null };
  it('model auto takes runtime, model and effort; an effort set on the agent stays', () => {
    const tier = { runtime: 'gemini' as const, model: 'flash', effort: 'low' as const };
    expect(onTier(node, tier, { model: true, effort: false })).toEqual({
      runtime: 'gemini',
      model: 'flash',
      effort: 'low',
    });
    expect(onTier({ ...node, effort: 'max' }, tier, { model: true, effort: false }).effort).toBe('max');
    expect(onTier({ ...node, model: 'o3', effort: 'auto' }, tier, { model: false, effort: true })).toEqual({
      runtime: 'codex',
      model: 'o3',
      effort: 'low',
    });
  });
});
