import { z } from 'zod';
import type { McpServer } from './pipeline.js';

/**
 * troupe's own MCP server (`mcp: [troupe]`, src/mcp/): what a stage's runtime call may do
 * through it, and what it records. The server runs as a child of the agent's CLI, in another
 * process than the executor, so it never appends task events: it writes each directive-like
 * tool call as one JSON line to the call's file, and the executor, once the call ends, turns the
 * lines into the text directives they stand for (pipeline/lang/directives.ts), as if the agent
 * had written them. Docs: docs/mcp.md.
 */

/** The pipeline's name for the server: `mcp: [troupe]`, without a command. */
export const TROUPE_MCP_SERVER = 'troupe';

/** A server named `troupe` without a command is troupe's own; the engine gives each call its own. */
export function isTroupeServer(server: McpServer): boolean {
  // nor a url: a remote server of that name is someone else's
  return server.server === TROUPE_MCP_SERVER && !server.command && !server.url;
}

/** One runtime call's identity and what it may do, as the engine decides it. */
export interface TroupeMcpCall {
  taskId: string;
  agent: string;
  stage: number;
  attempt: number;
  /** Whom `hand_off` may name: the targets of the agent's `condition: auto` handoffs. */
  handoffTargets: string[];
  /** `ask_human` works: the agent has `human_input` on demand. */
  canAsk: boolean;
  /** A session turn's consensus keyword (what `vote` writes), else null: not a turn. */
  voteKeyword: string | null;
}

/** The environment the server is started with (ENV.root, ENV.calls and ENV.store are added by app/). */
export const TROUPE_MCP_ENV = {
  root: 'TROUPE_MCP_ROOT',
  calls: 'TROUPE_MCP_CALLS',
  call: 'TROUPE_MCP_CALL',
  /** The project's store as the executor opened it (JSON): the server reads the same one. */
  store: 'TROUPE_MCP_STORE',
} as const;

export const McpDirective = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('handoff'), to: z.array(z.string()) }),
  z.object({ kind: z.literal('chunk_add'), description: z.string() }),
  z.object({ kind: z.literal('chunk_done'), id: z.string() }),
  z.object({ kind: z.literal('ask_human'), question: z.string() }),
  z.object({ kind: z.literal('vote'), agree: z.boolean(), keyword: z.string() }),
]);
export type McpDirective = z.infer<typeof McpDirective>;

export function mcpDirectiveLine(directive: McpDirective): string {
  return `${JSON.stringify(directive)}\n`;
}

/**
 * What one call may record: a thousand and more directives of the largest text a tool takes
 * (64 KiB). The server refuses to record past it and the executor reads no further.
 */
export const MCP_CALL_FILE_MAX_BYTES = 4 * 1024 * 1024;

/**
 * The directives of a call file, in order. A line that is not one (a write cut off when the
 * CLI killed the server) is passed over, so a torn last line never fails the stage.
 */
export function parseMcpDirectives(text: string): McpDirective[] {
  return text.split('\n').flatMap((line) => {
    if (!line.trim()) return [];
    try {
      const parsed = McpDirective.safeParse(JSON.parse(line));
      return parsed.success ? [parsed.data] : [];
    } catch {
      return [];
    }
  });
}

const CallSchema = z.object({
  taskId: z.string().min(1),
  agent: z.string().min(1),
  stage: z.number().int().positive(),
  attempt: z.number().int().positive(),
  handoffTargets: z.array(z.string()),
  canAsk: z.boolean(),
  voteKeyword: z.string().nullable(),
});

/** The call as one environment value (JSON), and back; null when it is not one. */
export function encodeMcpCall(call: TroupeMcpCall): string {
  return JSON.stringify(call);
}

export function decodeMcpCall(value: string): TroupeMcpCall | null {
  try {
    const parsed = CallSchema.safeParse(JSON.parse(value));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}
