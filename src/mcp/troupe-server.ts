import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { nextChunkId } from '../core/chunk.js';
import { NotFoundError, StateError, UsageError } from '../core/errors.js';
import { sizeText } from '../core/input-limit.js';
import type { TroupeMcpCall } from '../core/mcp-call.js';
import type { Pipeline } from '../core/pipeline.js';
import { usesChunks } from '../engine/plan/chunks.js';
import { packageVersion } from '../package-root.js';
import { contextWithInput } from '../pipeline/lang/context.js';
import type { CallSession } from './call-session.js';

/**
 * troupe's own MCP server: the tools an agent calls instead of writing text directives
 * (docs/mcp.md). Handoffs, chunks, questions and votes are recorded for the executor, which
 * reads them as the directives they stand for when the call ends; mail goes through the bus at
 * once; the context, spec and chunks are read from the task's log. A bad call throws, and the
 * SDK answers it as a tool error (`isError`) with the message.
 */
/** The most one text argument of a tool may hold, in UTF-8 bytes (docs/mcp.md). */
export const MAX_ARGUMENT_BYTES = 64 * 1024;

/** A text argument of at most MAX_ARGUMENT_BYTES; over it, the call is a tool error saying so. */
const capped = (text: z.ZodString) =>
  text.refine((value) => Buffer.byteLength(value, 'utf8') <= MAX_ARGUMENT_BYTES, {
    message: `longer than the ${sizeText(MAX_ARGUMENT_BYTES)} a tool argument may hold`,
  });

/**
 * Which tools the calling agent can use: only those are listed, so an agent is not offered a
 * tool that could only fail. The pipeline is read from the task; when it cannot be (no store),
 * the tools that depend on it are listed and each call says what is wrong.
 */
export interface ToolAvailability {
  handOff: boolean;
  chunks: boolean;
  askHuman: boolean;
  vote: boolean;
  spec: boolean;
  /** Whom `send_message` may name: the pipeline's other agents, and `user` (a person). */
  recipients: string[];
}

export function toolAvailability(call: TroupeMcpCall, pipeline: Pipeline | null): ToolAvailability {
  return {
    handOff: call.handoffTargets.length > 0,
    chunks: pipeline === null || usesChunks(pipeline),
    askHuman: call.canAsk,
    vote: call.voteKeyword !== null,
    spec: pipeline === null || pipeline.agents.some((a) => a.type === 'agent' && a.spec === 'required'),
    recipients: [...(pipeline?.agents.map((a) => a.id).filter((id) => id !== call.agent) ?? []), 'user'],
  };
}

export function troupeMcpServer(session: CallSession): McpServer {
  const server = new McpServer({ name: 'troupe', version: packageVersion() });
  const { call } = session;
  const text = (value: string) => ({ content: [{ type: 'text' as const, text: value }] });
  const json = (value: unknown) => text(JSON.stringify(value, null, 2));
  const can = toolAvailability(call, pipelineOf(session));

  if (can.handOff) {
    const allowed = call.handoffTargets.join(', ');
    server.registerTool(
      'hand_off',
      {
        description: `Choose which agents work next when your turn ends (as a HANDOFF: line). Allowed: ${allowed}.`,
        inputSchema: {
          to: z
            .array(capped(z.string()))
            .min(1)
            .describe(`the agent ids to hand off to, in order; each one of: ${allowed}`),
        },
      },
      ({ to }) => {
        const refused = to.filter((id) => !call.handoffTargets.includes(id));
        if (refused.length > 0)
          throw new UsageError(
            `agent '${call.agent}' cannot hand off to ${refused.map((id) => `'${id}'`).join(', ')}; allowed: ${allowed}`,
          );
        const targets = [...new Set(to)];
        session.record({ kind: 'handoff', to: targets });
        return text(`Recorded: when your turn ends, the task goes on to ${targets.join(', ')}.`);
      },
    );
  }

  if (can.chunks) {
    server.registerTool(
      'add_chunk',
      {
        description: "Add a chunk (a unit of work) to the task's tracked chunks (as CHUNK_ADD:).",
        inputSchema: {
          description: capped(z.string().trim().min(1)).describe('what the chunk is: one line of work to do'),
        },
      },
      ({ description }) => {
        const state = session.state();
        chunksTracked(state.definition);
        const id = pendingId(state.chunks, session.recorded().filter((d) => d.kind === 'chunk_add').length);
        session.record({ kind: 'chunk_add', description });
        // the description is not echoed: an agent that quotes the answer would write its text again
        return json({ id, note: 'added when your turn ends' });
      },
    );

    server.registerTool(
      'complete_chunk',
      {
        description: 'Mark a chunk done (as CHUNK_DONE:).',
        inputSchema: {
          id: capped(z.string().trim().min(1)).describe(
            'the chunk id, e.g. C-001: one list_chunks lists, or one add_chunk answered in this turn',
          ),
        },
      },
      ({ id }) => {
        const state = session.state();
        chunksTracked(state.definition);
        const added = session.recorded().filter((d) => d.kind === 'chunk_add');
        const known = [...state.chunks.map((c) => c.id), ...added.map((_, i) => pendingId(state.chunks, i))];
        if (!known.includes(id))
          throw new NotFoundError(`no chunk ${id}; the task has: ${known.join(', ') || 'none'}`);
        session.record({ kind: 'chunk_done', id });
        return text(`Recorded: ${id} is done when your turn ends.`);
      },
    );

    server.registerTool(
      'list_chunks',
      { description: "The task's chunks: id, description, status (pending or done)." },
      () => json(session.state().chunks.map(({ id, description, status }) => ({ id, description, status }))),
    );
  }

  if (can.askHuman) {
    server.registerTool(
      'ask_human',
      {
        description:
          'Ask a person a question (as HUMAN_INPUT:): the task waits for the answer when your turn ends.',
        inputSchema: {
          question: capped(z.string().trim().min(1)).describe(
            'the question, complete on its own: the person sees it without your context',
          ),
        },
      },
      ({ question }) => {
        session.record({ kind: 'ask_human', question });
        return text('Recorded: when your turn ends, troupe asks a person and the task waits for the answer.');
      },
    );
  }

  if (can.vote) {
    server.registerTool(
      'vote',
      {
        description:
          'Vote in a discussion session: agree or not that consensus is reached. Your last vote counts.',
        inputSchema: {
          agree: z
            .boolean()
            .describe('true: consensus is reached; false: not yet (withdraws an earlier vote)'),
        },
      },
      ({ agree }) => {
        session.record({ kind: 'vote', agree, keyword: call.voteKeyword! });
        return text(`Recorded: you ${agree ? 'agree' : 'do not agree'}.`);
      },
    );
  }

  const recipients = can.recipients.join(', ');
  server.registerTool(
    'send_message',
    {
      description: `Send a message on the bus at once, to another agent of the pipeline or to \`user\` (a person). Recipients: ${recipients}.`,
      inputSchema: {
        to: capped(z.string().trim().min(1)).describe(`the recipient, one of: ${recipients}`),
        subject: capped(z.string()).describe('a short subject line'),
        body: capped(z.string()).describe('the message'),
      },
    },
    ({ to, subject, body }) => {
      const agents = session.state().definition.agents.map((a) => a.id);
      if (to !== 'user' && !agents.includes(to))
        throw new NotFoundError(
          `no agent '${to}' in this pipeline; send to one of: ${[...agents, 'user'].join(', ')}`,
        );
      session.mail().send({ taskId: call.taskId, from: call.agent, to, subject, body });
      return text(`Sent to ${to}.`);
    },
  );

  server.registerTool(
    'read_messages',
    { description: 'Your unread messages on the bus (they are marked read).' },
    () => text(session.mail().drainInbox(call.agent) || 'No unread messages.'),
  );

  server.registerTool(
    'read_context',
    { description: "The task's shared context (context.md): its input and what each agent has done." },
    () => {
      const { contextMd, input } = session.state();
      return text(contextWithInput(contextMd, input));
    },
  );

  if (can.spec) {
    server.registerTool(
      'read_spec',
      {
        description:
          "The task's spec (requirements, files, verification), when an agent with `spec: required` wrote one.",
      },
      () => {
        const { spec } = session.state();
        return spec ? json(spec) : text('No spec has been recorded for this task.');
      },
    );
  }

  return server;
}

/** The task's pipeline, or null when the task cannot be read now (each call then says why). */
function pipelineOf(session: CallSession): Pipeline | null {
  try {
    return session.state().definition;
  } catch {
    return null;
  }
}

function chunksTracked(definition: Parameters<typeof usesChunks>[0]): void {
  if (!usesChunks(definition)) throw new StateError('this pipeline tracks no chunks: no agent has `chunks:`');
}

/** The id the i-th chunk this call adds gets, after the task's own (the executor adds them first). */
function pendingId(existing: Parameters<typeof nextChunkId>[0], i: number): string {
  let chunks = [...existing];
  for (let n = 0; n <= i; n++) chunks = [...chunks, { id: nextChunkId(chunks) }];
  return chunks.at(-1)!.id;
}
