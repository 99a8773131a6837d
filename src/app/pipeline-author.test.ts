import { describe, expect, it } from 'vitest';
import { scriptedRuntime } from '../runtimes/scripted.js';
import { type AuthorRound, authorPipeline } from './pipeline-author.js';

const valid =
  '```yaml\nagents:\n  - id: w\n    runtime: claude\n    system_prompt: "Write: {{ input }}"\n```';
const invalid = 'agents:\n  - id: w\n    runtime: claude\n    handoffs: [{ to: nobody }]\n';

function author(replies: string[], rounds?: number) {
  const seen: AuthorRound[] = [];
  const run = authorPipeline({
    request: 'one writer',
    file: '/project/.troupe/pipelines/w.yaml',
    runtime: scriptedRuntime({ agents: { author: replies }, gates: {}, human: {} }),
    agentRuntimes: ['claude', 'gemini'],
    cwd: '/project',
    timeoutMs: 5000,
    ...(rounds ? { rounds } : {}),
    onRound: (r) => seen.push(r),
  });
  return { run, seen };
}

describe('authorPipeline', () => {
  it('the first prompt carries the request, the rules, the JSON Schema and two examples', async () => {
    const { run, seen } = author([valid]);
    const done = await run;
    expect(done.pipeline.agents.map((a) => a.id)).toEqual(['w']);
    const prompt = seen[0]!.prompt;
    expect(prompt).toMatch(/^Write a troupe pipeline \(agents\.yaml\) for this team:\n\none writer\n/);
    expect(prompt).toContain('Use only these runtimes for the agents: claude, gemini.');
    expect(prompt).toContain('"$id":"https://troupe.dev/schema/pipeline.schema.json"');
    expect(prompt).toContain('Example (dev-team):\n```yaml\n');
    expect(prompt).toContain('Example (design-session):\n```yaml\n');
  });

  it('a later round gets the first prompt, the reply it fixes and its errors with file:line:col', async () => {
    const { run, seen } = author([invalid, valid]);
    await run;
    expect(seen.map((r) => [r.round, r.retrying])).toEqual([
      [1, true],
      [2, false],
    ]);
    const second = seen[1]!.prompt;
    expect(second.startsWith(seen[0]!.prompt)).toBe(true);
    expect(second).toContain(`Your previous reply (round 1):\n\`\`\`yaml\n${invalid.trimEnd()}\n\`\`\``);
    expect(second).toMatch(
      /found these errors in it:\n\/project\/\.troupe\/pipelines\/w\.yaml:4:\d+: error: .*nobody/,
    );
  });

  it('gives up after the last round, saying how many errors are left', async () => {
    const { run, seen } = author([invalid], 2);
    await expect(run).rejects.toMatchObject({
      code: 'authoring_failed',
      message: "the agent's pipeline still has 1 error after 2 rounds; nothing was written",
    });
    expect(seen.map((r) => r.retrying)).toEqual([true, false]);
  });
});
