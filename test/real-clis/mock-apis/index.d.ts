export interface Turn {
  text?: string;
  tool?: {
    name: string;
    input?: Record<string, unknown> | ((ctx: { cwd: string | null }) => Record<string, unknown>);
    /** A freeform (custom) tool's raw input, as Codex's apply_patch takes it. */
    freeform?: string;
    /** Codex: a `tool_search_call` with this query (the tools it finds come in the next request). */
    search?: string;
    /** Codex: the namespace of a tool `tool_search` found (an MCP server's is `mcp__<server>`). */
    namespace?: string;
  };
  usage?: { input?: number; output?: number };
  limit?: { resetAfterS: number };
  /** The first `times` requests reaching the turn (all, without `times`) fail this way. */
  fail?: { kind: 'auth' | 'server' | 'drop'; times?: number };
}
export type Script = Record<string, Turn[]>;
export interface RecordedMessage {
  role: string;
  kind: 'text' | 'tool_call' | 'tool_result';
  text: string;
  isError?: boolean;
}
export interface RecordedRequest {
  at: number;
  method: string;
  path: string;
  query: string;
  headers: Record<string, string | string[] | undefined>;
  // biome-ignore lint/suspicious/noExplicitAny: any vendor's JSON, read by the tests
  body: any;
  route: string;
  messages?: RecordedMessage[];
  script?: string | null;
  step?: number;
  answered?: 'limit' | 'tool' | 'text' | 'auth' | 'server' | 'drop';
}
export interface Mock {
  port: number;
  url: string;
  requests: RecordedRequest[];
  of(name: string): RecordedRequest[];
  close(): Promise<void>;
}
export interface Vendor {
  route(method: string, path: string): string;
}
export const anthropic: Vendor;
export const gemini: Vendor;
export const openai: Vendor;
export function startMock(vendor: Vendor, script: Script, options?: { fallbackTurn?: Turn }): Promise<Mock>;
