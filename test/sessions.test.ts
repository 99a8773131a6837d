import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { project, spawnTroupe, troupe, troupeJson, waitFor } from './support/troupe.js';

const participant = (id: string) =>
  `  - id: ${id}\n    runtime: claude\n    system_prompt: "${id} on {{ input }}. {{ chunks }}"\n`;

describe('sessions through the real CLI', () => {
  it('a 5-participant majority vote: three of five agreeing is consensus', async () => {
    const ids = ['p1', 'p2', 'p3', 'p4', 'p5'];
    const dir = project({
      'p.yaml': `agents:
  - id: vote
    type: session
    participants: [${ids.join(', ')}]
    max_rounds: 3
    consensus: {method: vote, keyword: "VOTE: AGREE", require: majority}
${ids.map(participant).join('')}`,
      's.yaml': `agents:
  p1: ["VOTE: AGREE"]
  p2: ["VOTE: AGREE"]
  p3: ["no"]
  p4: ["VOTE: AGREE"]
  p5: ["no"]
`,
    });
    const { code, json } = await troupeJson(dir, [
      'run',
      'cache layer',
      '--file',
      'p.yaml',
      '--script',
      's.yaml',
    ]);
    expect(code).toBe(0);
    expect(json.stages.map((s) => s.agent)).toEqual([...ids, 'vote']);
    const transcript = readFileSync(join(dir, '.troupe', 'tasks', json.id, 'transcript.md'), 'utf8');
    expect(transcript).toContain('## Consensus Reached (Round 1)');
    expect(transcript).toContain('**Agreed by**: p1, p2, p4');
  });

  it('a withdrawn vote holds consensus back; no consensus after max_rounds fails the task with a reason', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: talk
    type: session
    participants: [a, b]
    max_rounds: 2
${participant('a')}${participant('b')}`,
      's.yaml': `agents:
  a: ["VOTE: AGREE", "I take it back"]
  b: ["not yet", "VOTE: AGREE"]
`,
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(code).toBe(1);
    expect(json.error).toBe("session 'talk' reached no consensus after 2 rounds");
    const transcript = readFileSync(join(dir, '.troupe', 'tasks', json.id, 'transcript.md'), 'utf8');
    expect(transcript.match(/^## Round \d/gm)).toEqual(['## Round 1', '## Round 2']);
    expect(transcript).toContain('## No Consensus (after 2 rounds)');
  });

  it('on_no_consensus routes the task on instead of failing it', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: talk
    type: session
    participants: [a, b]
    max_rounds: 1
    handoffs:
      - {to: decide, condition: on_no_consensus}
${participant('a')}${participant('b')}  - id: decide
    runtime: claude
`,
      's.yaml': 'agents:\n  a: ["no"]\n  b: ["no"]\n  decide: ["the lead decides: ship it"]\n',
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(code).toBe(0);
    expect(json.stages.at(-1)).toMatchObject({ agent: 'decide', output: 'the lead decides: ship it' });
  });

  it('moderator turn order: the moderator opens and NEXT: picks who speaks', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: meet
    type: session
    participants: [a, b, lead]
    turn_order: moderator
    summary_agent: lead
    max_rounds: 1
    consensus: {method: moderator_decides}
${participant('a')}${participant('b')}${participant('lead')}`,
      's.yaml': `agents:
  a: ["a speaks"]
  b: ["b speaks"]
  lead: ["Let us hear from b first.\\nNEXT: b", "Decided. VOTE: AGREE"]
`,
    });
    const { json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    // round 1: the moderator opens, then b (whom it named), then a
    expect(json.stages.slice(0, 3).map((s) => s.agent)).toEqual(['lead', 'b', 'a']);
  });

  it('require_chunks_done holds consensus back until the last chunk is done', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: build
    type: session
    participants: [pm, dev]
    max_rounds: 4
    consensus: {require_chunks_done: true}
    chunks:
      initial: ["set up", "auth flow"]
${participant('pm')}${participant('dev')}`,
      's.yaml': `agents:
  pm: ["VOTE: AGREE"]
  dev:
    - "CHUNK_DONE: C-001\\nCHUNK_ADD: add tests\\nVOTE: AGREE"
    - "CHUNK_DONE: C-002\\nVOTE: AGREE"
    - "CHUNK_DONE: C-003\\nVOTE: AGREE"
`,
    });
    const { code, json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    expect(code).toBe(0);
    // everyone agreed from round 1, but the chunks were done only in round 3
    expect(json.stages.filter((s) => s.agent === 'dev')).toHaveLength(3);
    const chunks = JSON.parse(readFileSync(join(dir, '.troupe', 'tasks', json.id, 'chunks.json'), 'utf8'));
    expect(
      chunks.chunks.map((c: { id: string; status: string; created_by: string }) => [
        c.id,
        c.status,
        c.created_by,
      ]),
    ).toEqual([
      ['C-001', 'done', 'config'],
      ['C-002', 'done', 'config'],
      ['C-003', 'done', 'dev'],
    ]);
    const prompt = (await troupe(dir, ['chunks', 'list', json.id])).stdout;
    expect(prompt).toContain('**Progress: 3/3 done, 0 remaining**');
  });

  it('`troupe chunks` from another shell reaches the running task on its next turn', async () => {
    const dir = project({
      'p.yaml': `agents:
  - id: build
    type: session
    participants: [dev]
    max_rounds: 100
    consensus: {require_chunks_done: true}
    chunks:
      initial: ["only chunk"]
${participant('dev')}`,
      // Until the chunk from the other shell is in its prompt, dev keeps working without a vote
      // (a new output each turn, or the runaway guard would stop it), so the session cannot end
      // before the chunk arrives, however slow that shell is.
      's.yaml': `agents:
  dev:
    - when: "C-002 \\\\| ⬜ pending \\\\| urgent"
      reply: "saw the urgent chunk. CHUNK_DONE: C-002\\nVOTE: AGREE"
${Array.from({ length: 90 }, (_, i) => `    - {reply: "working, pass ${i + 1}. CHUNK_DONE: C-001", delay_ms: 100}`).join('\n')}
`,
      '.troupe/config.yaml': 'pipeline: {max_stages: 200}\n',
    });
    const child = spawnTroupe(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const id = await waitFor(() =>
      /▶ \[1\] dev/.test(stderr) ? /troupe (T-[0-9A-F]{6})/.exec(stderr)?.[1] : undefined,
    );
    const added = await troupe(dir, ['chunks', 'add', id, 'urgent']);
    expect(added.stdout).toBe('added C-002: urgent');
    await child;
    const { json } = await troupeJson(dir, ['status', id]);
    expect(json.status).toBe('completed');
    expect(json.stages.map((s) => s.output)).toContain(
      'saw the urgent chunk. CHUNK_DONE: C-002\nVOTE: AGREE',
    );
  });

  it('a chunk that does not exist is exit 3 and changes nothing', async () => {
    const dir = project({
      'p.yaml': `agents:\n  - id: s\n    type: session\n    participants: [a]\n    chunks: {initial: [one]}\n${participant('a')}`,
      's.yaml': 'agents:\n  a: ["VOTE: AGREE"]\n',
    });
    const { json } = await troupeJson(dir, ['run', 'x', '--file', 'p.yaml', '--script', 's.yaml']);
    const bad = await troupe(dir, ['chunks', 'done', json.id, 'C-999']);
    expect(bad.code).toBe(3);
    expect(bad.stderr).toContain('has no chunk C-999');
    expect((await troupeJson(dir, ['status', json.id])).json).toEqual(json);
  });
});
