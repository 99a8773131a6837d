import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bin, project, troupe, troupeJson } from '../../test/support/troupe.js';
import { parseMcpDirectives, TROUPE_MCP_ENV, type TroupeMcpCall } from '../core/mcp-call.js';

/**
 * troupe's MCP server through the SDK's own client, over a real stdio child (`node
 * bin/troupe.js mcp`), against a real task: planner wrote a spec, dev waits at its human gate.
 */

const pipeline = `agents:
  - id: planner
    runtime: claude
    spec: required
    chunks: {initial: ["write the parser"]}
    handoffs: [{to: dev}]
  - id: dev
    runtime: claude
    human_input: on_demand
    gate: {type: human}
    handoffs: [{to: "qa, docs", condition: auto}]
  - id: qa
    runtime: claude
  - id: docs
    runtime: claude
`;
const script = `agents:
  planner:
    - '{"requirements": ["parse it"], "files": ["src/parse.ts"], "verification": ["npm test"]}'
  dev: ["working on it"]
`;

let dir: string;
let taskId: string;
const clients: Client[] = [];

beforeAll(async () => {
  dir = project({ 'agents.yaml': pipeline, 'script.yaml': script });
  const run = await troupeJson(dir, [
    'run',
    'build a parser',
    '--file',
    'agents.yaml',
    '--script',
    'script.yaml',
    '--size',
    'M',
  ]);
  expect(run.json.status).toBe('awaiting_gate');
  taskId = run.json.id;
});

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

let calls = 0;

/** The environment the executor gives a call's server: dev's stage 2 unless `identity` says. */
function serverEnv(file = join(dir, `calls-${++calls}.jsonl`), identity?: TroupeMcpCall, root = dir) {
  return {
    PATH: process.env.PATH ?? '',
    [TROUPE_MCP_ENV.root]: root,
    [TROUPE_MCP_ENV.calls]: file,
    [TROUPE_MCP_ENV.call]: JSON.stringify(identity ?? devCall()),
    [TROUPE_MCP_ENV.store]: JSON.stringify({ kind: 'sqlite', file: join(root, '.troupe', 'troupe.db') }),
  };
}

const devCall = (call: Partial<TroupeMcpCall> = {}): TroupeMcpCall => ({
  taskId,
  agent: 'dev',
  stage: 2,
  attempt: 1,
  handoffTargets: ['qa', 'docs'],
  canAsk: true,
  voteKeyword: null,
  ...call,
});

/** A server for one call of dev's stage 2 (or as `call` says), and the file it records to. */
async function server(call: Partial<TroupeMcpCall> = {}, root = dir) {
  const file = join(root, `calls-${++calls}.jsonl`);
  const identity = devCall(call);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, 'mcp'],
    env: serverEnv(file, identity, root),
  });
  const client = new Client({ name: 'test', version: '0.0.0' });
  await client.connect(transport);
  clients.push(client);
  const tool = async (name: string, args: Record<string, unknown> = {}) => {
    const result = (await client.callTool({ name, arguments: args })) as {
      isError?: boolean;
      content: Array<{ text: string }>;
    };
    return { error: result.isError === true, text: result.content.map((c) => c.text).join('') };
  };
  const recorded = () => {
    try {
      return parseMcpDirectives(readFileSync(file, 'utf8'));
    } catch {
      return [];
    }
  };
  return { client, tool, recorded };
}

describe('troupe mcp', () => {
  it('lists the tools the calling agent can use, each parameter described, recipients and targets named', async () => {
    const { client } = await server();
    const { tools } = await client.listTools();
    // dev: an auto handoff, human input on demand; the pipeline tracks chunks and has a spec writer
    expect(tools.map((t) => t.name).sort()).toEqual([
      'add_chunk',
      'ask_human',
      'complete_chunk',
      'hand_off',
      'list_chunks',
      'read_context',
      'read_messages',
      'read_spec',
      'send_message',
    ]);
    expect(tools.find((t) => t.name === 'hand_off')!.description).toContain('Allowed: qa, docs');
    for (const tool of tools) {
      const properties = (tool.inputSchema.properties ?? {}) as Record<string, { description?: string }>;
      for (const [name, property] of Object.entries(properties))
        expect(property.description, `${tool.name}.${name}`).toMatch(/\w/);
    }
    const send = tools.find((t) => t.name === 'send_message')!;
    expect(send.description).toContain('Recipients: planner, qa, docs, user.');
    const to = (send.inputSchema.properties as Record<string, { description: string }>).to!;
    expect(to.description).toBe('the recipient, one of: planner, qa, docs, user');
    const handOff = tools.find((t) => t.name === 'hand_off')!;
    expect(JSON.stringify(handOff.inputSchema)).toContain('each one of: qa, docs');

    // planner: no auto handoff, no human input, not in a session
    const planner = await server({ agent: 'planner', stage: 1, handoffTargets: [], canAsk: false });
    expect((await planner.client.listTools()).tools.map((t) => t.name).sort()).toEqual([
      'add_chunk',
      'complete_chunk',
      'list_chunks',
      'read_context',
      'read_messages',
      'read_spec',
      'send_message',
    ]);
    // a session turn gets vote
    const turn = await server({ voteKeyword: 'VOTE: AGREE' });
    expect((await turn.client.listTools()).tools.map((t) => t.name)).toContain('vote');
  });

  it('a pipeline without chunks or a spec offers no chunk or spec tools', async () => {
    const plain = project({
      'agents.yaml':
        'agents:\n  - id: writer\n    runtime: claude\n    handoffs: [{to: editor}]\n  - id: editor\n    runtime: claude\n',
      'script.yaml': 'agents:\n  writer: ["draft"]\n  editor: ["edited"]\n',
    });
    const run = await troupeJson(plain, [
      'run',
      'a poem',
      '--file',
      'agents.yaml',
      '--script',
      'script.yaml',
    ]);
    const call = { taskId: run.json.id, agent: 'editor', stage: 2, handoffTargets: [], canAsk: false };
    const { client, tool } = await server(call, plain);
    const { tools } = await client.listTools();
    expect(tools.map((t) => t.name).sort()).toEqual(['read_context', 'read_messages', 'send_message']);
    expect(tools.find((t) => t.name === 'send_message')!.description).toContain('Recipients: writer, user.');
    // a tool not offered is not there to call
    expect((await tool('add_chunk', { description: 'x' })).error).toBe(true);
  });

  it('reads the task: its context, its spec and its chunks', async () => {
    const { tool } = await server();
    const context = await tool('read_context');
    expect(context.error).toBe(false);
    expect(context.text).toContain('build a parser');
    expect(context.text).toContain('planner');
    expect(JSON.parse((await tool('read_spec')).text)).toMatchObject({
      agent: 'planner',
      spec: { requirements: ['parse it'], files: ['src/parse.ts'] },
    });
    expect(JSON.parse((await tool('list_chunks')).text)).toEqual([
      { id: 'C-001', description: 'write the parser', status: 'pending' },
    ]);
  });

  it('in the first stage, the context is the task’s input', async () => {
    const first = project({
      'agents.yaml': 'agents:\n  - id: planner\n    runtime: claude\n    human_input: before\n',
      'script.yaml': 'agents:\n  planner: ["ok"]\n',
    });
    const run = await troupeJson(first, [
      'run',
      'summarise the notes',
      '--file',
      'agents.yaml',
      '--script',
      'script.yaml',
    ]);
    expect(run.json.stages).toEqual([]);
    const call = { taskId: run.json.id, agent: 'planner', stage: 1, handoffTargets: [], canAsk: false };
    const before = await (await server(call, first)).tool('read_context');
    expect(before.text).toContain('summarise the notes');
    expect(before.text).toContain('no stage has finished yet');
  });

  it('records chunks added and completed, with the ids they will get', async () => {
    const { tool, recorded } = await server();
    expect(JSON.parse((await tool('add_chunk', { description: 'tests' })).text)).toMatchObject({
      id: 'C-002',
    });
    expect(JSON.parse((await tool('add_chunk', { description: 'docs' })).text)).toMatchObject({
      id: 'C-003',
    });
    expect((await tool('complete_chunk', { id: 'C-003' })).error).toBe(false);
    expect((await tool('complete_chunk', { id: 'C-001' })).error).toBe(false);
    expect(recorded()).toEqual([
      { kind: 'chunk_add', description: 'tests' },
      { kind: 'chunk_add', description: 'docs' },
      { kind: 'chunk_done', id: 'C-003' },
      { kind: 'chunk_done', id: 'C-001' },
    ]);
  });

  it('records no further once the call has recorded its 4 MiB; the tool says so', async () => {
    const { tool, recorded } = await server();
    const description = 'x'.repeat(60 * 1024);
    const answers = [];
    for (let i = 0; i < 70; i++) answers.push(await tool('add_chunk', { description }));
    const refused = answers.filter((a) => a.error);
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.text).toMatch(/at most 4194304 are kept/);
    expect(recorded()).toHaveLength(70 - refused.length);
    expect(answers.slice(0, 70 - refused.length).every((a) => !a.error)).toBe(true);
  });

  it('a chunk that does not exist is a tool error naming the ones that do', async () => {
    const { tool, recorded } = await server();
    const missing = await tool('complete_chunk', { id: 'C-009' });
    expect(missing).toEqual({ error: true, text: 'no chunk C-009; the task has: C-001' });
    expect(recorded()).toEqual([]);
  });

  it('hands off only to the targets the pipeline allows from this agent', async () => {
    const { tool, recorded } = await server();
    const refused = await tool('hand_off', { to: ['qa', 'ghost'] });
    expect(refused).toEqual({
      error: true,
      text: "agent 'dev' cannot hand off to 'ghost'; allowed: qa, docs",
    });
    expect((await tool('hand_off', { to: ['docs', 'qa', 'docs'] })).error).toBe(false);
    expect(recorded()).toEqual([{ kind: 'handoff', to: ['docs', 'qa'] }]);
  });

  it('an agent without an auto handoff cannot choose where it goes: the tool is not there', async () => {
    const { tool, recorded } = await server({ agent: 'planner', stage: 1, handoffTargets: [] });
    const refused = await tool('hand_off', { to: ['dev'] });
    expect(refused.error).toBe(true);
    expect(refused.text).toContain('hand_off');
    expect(recorded()).toEqual([]);
  });

  it('asks a person only for an agent with human_input on demand', async () => {
    const dev = await server();
    expect((await dev.tool('ask_human', { question: 'which grammar?' })).error).toBe(false);
    expect(dev.recorded()).toEqual([{ kind: 'ask_human', question: 'which grammar?' }]);
    const planner = await server({ agent: 'planner', stage: 1, canAsk: false });
    const refused = await planner.tool('ask_human', { question: 'which grammar?' });
    expect(refused.error).toBe(true);
    expect(refused.text).toContain('ask_human');
    expect(planner.recorded()).toEqual([]);
  });

  it('votes in a session turn with its keyword, and refuses outside one', async () => {
    const turn = await server({ voteKeyword: 'VOTE: AGREE' });
    expect((await turn.tool('vote', { agree: true })).error).toBe(false);
    expect((await turn.tool('vote', { agree: false })).text).toBe('Recorded: you do not agree.');
    expect(turn.recorded()).toEqual([
      { kind: 'vote', agree: true, keyword: 'VOTE: AGREE' },
      { kind: 'vote', agree: false, keyword: 'VOTE: AGREE' },
    ]);
    const outside = await server();
    const refused = await outside.tool('vote', { agree: true });
    expect(refused.error).toBe(true);
    expect(refused.text).toContain('vote');
    expect(outside.recorded()).toEqual([]);
  });

  it('sends mail on the bus at once, and reads the agent’s unread mail', async () => {
    const qa = await server({ agent: 'qa', stage: 3 });
    expect(
      await qa.tool('send_message', { to: 'dev', subject: 'bug', body: 'the parser drops commas' }),
    ).toEqual({
      error: false,
      text: 'Sent to dev.',
    });
    const dev = await server();
    const inbox = await dev.tool('read_messages');
    expect(inbox.text).toContain('From qa (status: bug):\nthe parser drops commas');
    expect((await dev.tool('read_messages')).text).toBe('No unread messages.');
    // the bus is AMQ's: `troupe bus` sees what the tool sent
    await qa.tool('send_message', { to: 'user', subject: 'fyi', body: 'done' });
    const list = await troupe(dir, ['bus', 'list', '--me', 'user', '--json']);
    expect(list.stdout).toContain('fyi');
    // sends are not directives: nothing is recorded for the executor
    expect(qa.recorded()).toEqual([]);
  });

  it('a recipient that is not in the pipeline is a tool error', async () => {
    const { tool } = await server();
    const refused = await tool('send_message', { to: 'nobody', subject: 's', body: 'b' });
    expect(refused).toEqual({
      error: true,
      text: "no agent 'nobody' in this pipeline; send to one of: planner, dev, qa, docs, user",
    });
  });

  it('bad arguments are a tool error, and the server goes on answering', async () => {
    const { tool } = await server();
    const bad = await tool('hand_off', { to: 'qa' });
    expect(bad.error).toBe(true);
    expect(bad.text).toContain('Invalid arguments for tool hand_off');
    expect((await tool('add_chunk', {})).error).toBe(true);
    expect((await tool('list_chunks')).error).toBe(false);
  });

  it('a text argument over 64 KiB is a tool error saying so, and nothing is recorded', async () => {
    const { tool, recorded } = await server();
    const big = await tool('add_chunk', { description: 'x'.repeat(64 * 1024 + 1) });
    expect(big.error).toBe(true);
    expect(big.text).toContain('longer than the 64 KiB a tool argument may hold');
    const body = await tool('send_message', { to: 'qa', subject: 's', body: 'é'.repeat(40 * 1024) });
    expect(body.error).toBe(true);
    expect((await tool('add_chunk', { description: 'x'.repeat(64 * 1024) })).error).toBe(false);
    expect(recorded()).toHaveLength(1);
  });

  it('a message over 1 MiB gets an error answer with its id, and the server goes on answering', async () => {
    const child = spawn(process.execPath, [bin, 'mcp'], {
      env: serverEnv(),
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    const answers: Array<{ id: unknown; error?: { code: number; message: string }; result?: unknown }> = [];
    let buffered = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffered += chunk.toString('utf8');
      const lines = buffered.split('\n');
      buffered = lines.pop()!;
      answers.push(...lines.filter(Boolean).map((line) => JSON.parse(line)));
    });
    const send = (message: object) => child.stdin.write(`${JSON.stringify(message)}\n`);
    const call = (id: number, description: string) =>
      send({
        jsonrpc: '2.0',
        id,
        method: 'tools/call',
        params: { name: 'add_chunk', arguments: { description } },
      });
    send({
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '0' } },
    });
    send({ jsonrpc: '2.0', method: 'notifications/initialized' });
    call(2, 'x'.repeat(20 * 1024 * 1024));
    call(3, 'y'.repeat(9 * 1024 * 1024));
    // the SDK's own order puts the id last
    child.stdin.write(
      `{"method":"tools/call","params":{"name":"add_chunk","arguments":{"description":"${'z'.repeat(3 * 1024 * 1024)}"}},"jsonrpc":"2.0","id":"four"}\n`,
    );
    call(5, 'small');
    for (let i = 0; i < 600 && !answers.some((a) => a.id === 5); i++)
      await new Promise((resolve) => setTimeout(resolve, 50));
    child.stdin.end();
    await new Promise((resolve) => child.once('close', resolve));
    const refused = answers.filter((a) => a.error);
    expect(refused.map((a) => [a.id, a.error!.code])).toEqual([
      [2, -32600],
      [3, -32600],
      ['four', -32600],
    ]);
    expect(refused[0]!.error!.message).toBe(
      `the message is ${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'add_chunk', arguments: { description: 'x'.repeat(20 * 1024 * 1024) } } }).length} bytes, over troupe mcp's 1 MiB limit; nothing was done`,
    );
    expect(answers.find((a) => a.id === 5)).toMatchObject({ result: { content: [{ type: 'text' }] } });
  });

  it('started without a call’s identity: one line and the usage exit code', async () => {
    const run = await troupe(dir, ['mcp']);
    expect(run.code).toBe(2);
    expect(run.stderr.split('\n')[0]).toBe(
      'troupe: TROUPE_MCP_ROOT, TROUPE_MCP_CALLS, TROUPE_MCP_CALL, TROUPE_MCP_STORE not set',
    );
    expect(run.stderr).not.toContain('    at ');
  });
});
