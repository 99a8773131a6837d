import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { eventLog, project, repoRoot, troupe } from './support/troupe.js';

/**
 * `mcp: [troupe]` through the built binary: each runtime's fake CLI reads the MCP config troupe
 * gave it (as the real CLI would), starts troupe's server with the SDK's client and calls its
 * tools; the task's events are the ones the same directives written as text produce.
 */

const fake = (cli: string) => join(repoRoot, 'test', 'fixtures', 'fake-clis', cli);

const pipeline = (runtime: string) => `agents:
  - id: writer
    runtime: ${runtime}
    mcp: [troupe]
    chunks: {initial: ["draft"]}
    handoffs: [{to: "editor, critic", condition: auto}]
  - id: editor
    runtime: ${runtime}
  - id: critic
    runtime: ${runtime}
`;

const toolCalls = [
  { server: 'troupe', tool: 'hand_off', arguments: { to: ['editor'] } },
  { server: 'troupe', tool: 'add_chunk', arguments: { description: 'polish the rhymes' } },
  { server: 'troupe', tool: 'complete_chunk', arguments: { id: 'C-001' } },
];

/** What the directives changed, without times and texts that differ between the runs. */
function directiveEvents(dir: string, taskId: string) {
  return eventLog(dir, taskId).flatMap(({ type, data }) => {
    if (type === 'handoff') {
      const targets = data.targets as Array<{ agent: string; condition: string }>;
      return [{ type, targets: targets.map((t) => [t.agent, t.condition]) }];
    }
    if (type === 'chunk_added') {
      const { id, description, status, created_by } = data.chunk as Record<string, string>;
      return [{ type, id, description, status, created_by }];
    }
    if (type === 'chunk_updated') return [{ type, ...data }];
    return [];
  });
}

async function runJson(dir: string, args: string[], env: Record<string, string> = {}) {
  const run = await troupe(dir, [...args, '--json'], env);
  try {
    return JSON.parse(run.stdout) as {
      id: string;
      status: string;
      stages: Array<{ agent: string; output: string }>;
    };
  } catch {
    throw new Error(`not JSON (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  }
}

describe('mcp: [troupe] on each runtime', () => {
  // the same directives as text, under a script: what the tool calls must come to
  let textEvents: ReturnType<typeof directiveEvents>;
  beforeAll(async () => {
    const dir = project({
      'agents.yaml': pipeline('claude'),
      'script.yaml': `agents:
  writer: ["HANDOFF: editor\\nCHUNK_ADD: polish the rhymes\\nCHUNK_DONE: C-001"]
  editor: ["edited"]
`,
    });
    const text = await runJson(dir, ['run', 'a poem', '--file', 'agents.yaml', '--script', 'script.yaml']);
    expect(text.status).toBe('completed');
    textEvents = directiveEvents(dir, text.id);
  });

  for (const cli of ['claude', 'gemini', 'codex']) {
    it(`${cli}: hand_off, add_chunk and complete_chunk land as the text directives' events`, async () => {
      const dir = project({ 'agents.yaml': pipeline(cli) });
      const task = await runJson(dir, ['run', 'a poem', '--file', 'agents.yaml'], {
        [`TROUPE_${cli.toUpperCase()}_BIN`]: fake(cli),
        FAKE_CLI_MCP_CALLS: JSON.stringify(toolCalls),
      });
      expect(task.status).toBe('completed');
      expect(task.stages.map((s) => s.agent)).toEqual(['writer', 'editor']);
      // the server answered the tools (the fake replies with the answers)
      expect(task.stages[0]!.output).toContain(
        'hand_off: Recorded: when your turn ends, the task goes on to editor.',
      );
      expect(task.stages[0]!.output).toContain('"id": "C-002"');
      const events = directiveEvents(dir, task.id);
      expect(events).toEqual(textEvents);
      expect(events).toEqual([
        {
          type: 'chunk_added',
          id: 'C-002',
          description: 'polish the rhymes',
          status: 'pending',
          created_by: 'writer',
        },
        { type: 'chunk_updated', id: 'C-001', status: 'done', by: 'writer' },
        { type: 'handoff', targets: [['editor', 'auto']] },
        // the editor's end
        { type: 'handoff', targets: [] },
      ]);
    });
  }

  it('a tool call refused (a target the pipeline does not allow) is a tool error the agent sees, and hands off to no one', async () => {
    const dir = project({ 'agents.yaml': pipeline('claude') });
    const task = await runJson(dir, ['run', 'a poem', '--file', 'agents.yaml'], {
      TROUPE_CLAUDE_BIN: fake('claude'),
      FAKE_CLI_MCP_CALLS: JSON.stringify([
        { server: 'troupe', tool: 'hand_off', arguments: { to: ['ghost'] } },
      ]),
    });
    expect(task.stages[0]!.output).toContain(
      "hand_off failed: agent 'writer' cannot hand off to 'ghost'; allowed: editor, critic",
    );
    expect(task.stages.map((s) => s.agent)).toEqual(['writer']);
    expect(directiveEvents(dir, task.id)).toEqual([{ type: 'handoff', targets: [] }]);
  });

  it('ask_human: the task waits for a person with the question', async () => {
    const dir = project({
      'agents.yaml': `agents:
  - id: writer
    runtime: claude
    mcp: [troupe]
    human_input: on_demand
`,
    });
    const run = await troupe(dir, ['run', 'a poem', '--file', 'agents.yaml', '--json'], {
      TROUPE_CLAUDE_BIN: fake('claude'),
      FAKE_CLI_MCP_CALLS: JSON.stringify([
        { server: 'troupe', tool: 'ask_human', arguments: { question: 'Which meter?' } },
      ]),
    });
    const task = JSON.parse(run.stdout) as { waiting: { kind: string; agent: string; questions: string[] } };
    expect(task.waiting).toMatchObject({ agent: 'writer', questions: ['Which meter?'] });
  });

  it('vote: a session reaches consensus on the participants’ votes through the tool', async () => {
    const dir = project({
      'agents.yaml': `agents:
  - id: talk
    type: session
    participants: [alice, bob]
    max_rounds: 3
    consensus: {method: vote, keyword: "WE FULLY AGREE", require: all}
  - id: alice
    runtime: claude
    mcp: [troupe]
  - id: bob
    runtime: claude
    mcp: [troupe]
`,
    });
    const task = await runJson(dir, ['run', 'tabs or spaces', '--file', 'agents.yaml'], {
      TROUPE_CLAUDE_BIN: fake('claude'),
      FAKE_CLI_MCP_CALLS: JSON.stringify([{ server: 'troupe', tool: 'vote', arguments: { agree: true } }]),
    });
    expect(task.status).toBe('completed');
    const rounds = eventLog(dir, task.id).filter((e) => e.type === 'session_round_ended');
    expect(rounds.map((e) => e.data)).toEqual([
      expect.objectContaining({ round: 1, agreed: ['alice', 'bob'], consensus: true }),
    ]);
  });
});
