import { existsSync } from 'node:fs';
import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Effort, Permissions } from '../core/pipeline-vocabulary.js';
import {
  type Runtime,
  RuntimeError,
  type RuntimeErrorKind,
  type RuntimeEvent,
  type RuntimeRequest,
} from '../core/runtime.js';
import { RUNTIMES } from '../core/runtimes.js';
import { classifyMessage, hintFor } from './classify.js';
import { ARGV_PROMPT_LIMIT } from './claude.js';
import {
  type CliParser,
  type CliRuntimeOptions,
  num,
  type ResultEvent,
  runCli,
  stderrTail,
} from './cli-run.js';
import { parseJsonLine } from './jsonl.js';
import { type LoginProbe, probeTimedOut } from './login-probe.js';
import { mcpLaunch, mcpRemote } from './mcp.js';
import { effectivePermissions, flagsChoosePermissions } from './permissions.js';
import type { CliExit } from './process.js';
import { parseCodexReset } from './reset-time.js';

/**
 * Codex CLI headless: `codex exec --json`, JSONL on stdout. Only `turn.failed` is fatal; the
 * `Reconnecting...` errors before it are retries, except that offline Codex reconnects forever,
 * so a streak of them (ten, or a minute) ends the stage as `network`. Run with TZ=UTC so that
 * "try again at 1:13 PM" has a known zone.
 */

export interface CodexOptions extends CliRuntimeOptions {
  /** Reconnects in a row that end the run (default 10). */
  maxReconnects?: number;
  /** How long a streak of reconnects may last (default 60 s). */
  reconnectWindowMs?: number;
  /** How long Codex may say "waiting for network" before the stage ends (default 30 s). */
  offlineWindowMs?: number;
}

const SANDBOX: Record<Permissions, string> = {
  read_only: 'read-only',
  edit: 'workspace-write',
  full: 'danger-full-access',
};
const EFFORT: Record<Effort, string> = { low: 'low', medium: 'medium', high: 'high', max: 'xhigh' };

export function codexRuntime(options: CodexOptions = {}): Runtime {
  const bin = options.bin ?? 'codex';
  const now = options.now ?? (() => new Date());
  return {
    name: 'codex',
    async *run(request) {
      const temp: string[] = [];
      let outputSchemaFile: string | null = null;
      if (request.outputSchema && strictSchema(request.outputSchema)) {
        const dir = await mkdtemp(path.join(os.tmpdir(), 'troupe-codex-'));
        temp.push(dir);
        outputSchemaFile = path.join(dir, 'output-schema.json');
        await writeFile(outputSchemaFile, JSON.stringify(request.outputSchema), { mode: 0o600 });
      }
      for (const server of request.mcp.map(mcpRemote)) {
        if (server?.transport === 'sse')
          yield {
            type: 'notice',
            level: 'warning',
            message: `codex speaks only streamable HTTP to MCP servers: ${server.name} (transport: sse) is tried that way`,
          };
      }
      const { args, input, logged } = codexArgs(request, insideGitRepo(request.cwd), {
        outputSchemaFile,
        // a name config.toml does not define would be a server without a transport: Codex refuses it
        userMcpServers: request.extraFlags.includes('--ignore-user-config')
          ? []
          : await userCodexMcpServers(options.env ?? {}),
      });
      yield* runCli({
        runtime: 'codex',
        bin,
        args,
        loggedArgs: logged,
        ...(input !== undefined ? { input } : {}),
        env: { ...options.env, TZ: 'UTC' },
        request,
        parser: new CodexStreamParser(
          now,
          options.maxReconnects ?? 10,
          options.reconnectWindowMs ?? 60_000,
          options.offlineWindowMs ?? 30_000,
        ),
        install: RUNTIMES.codex.install,
        temp,
      });
    },
  };
}

/**
 * The MCP servers of the user's own `$CODEX_HOME/config.toml` (`[mcp_servers.<name>]` tables and
 * `mcp_servers.<name>.… =` keys): a task runs only the agent's, so each of these is disabled.
 */
export async function userCodexMcpServers(env: Record<string, string | undefined>): Promise<string[]> {
  const home =
    env.CODEX_HOME ||
    (env.HOME ? path.join(env.HOME, '.codex') : null) ||
    process.env.CODEX_HOME ||
    path.join(os.homedir(), '.codex');
  const toml = await readFile(path.join(home, 'config.toml'), 'utf8').catch(() => '');
  return tomlMcpServerNames(toml);
}

export function tomlMcpServerNames(toml: string): string[] {
  const key = String.raw`(?:"((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+))`;
  const header = new RegExp(String.raw`^\s*\[\s*mcp_servers\s*\.\s*${key}`, 'gm');
  const dotted = new RegExp(String.raw`^\s*mcp_servers\s*\.\s*${key}\s*\.`, 'gm');
  const names = new Set<string>();
  for (const m of [...toml.matchAll(header), ...toml.matchAll(dotted)]) {
    const name = m[1] !== undefined ? (JSON.parse(`"${m[1]}"`) as string) : (m[2] ?? m[3]);
    if (name) names.add(name);
  }
  return [...names];
}

/**
 * Codex sends --output-schema as a strict JSON schema, which OpenAI accepts only when every
 * object lists all its properties as required and allows no others: any other schema would
 * fail the call, so it is left to troupe's own check of the output.
 */
export function strictSchema(schema: unknown): boolean {
  if (Array.isArray(schema)) return schema.every(strictSchema);
  if (!schema || typeof schema !== 'object') return true;
  const s = schema as Record<string, unknown>;
  if (s.type === 'object' || s.properties) {
    const keys = Object.keys((s.properties as object | undefined) ?? {});
    const required = Array.isArray(s.required) ? s.required : [];
    if (s.additionalProperties !== false || !keys.every((k) => required.includes(k))) return false;
  }
  return Object.values(s).every(strictSchema);
}

export interface CodexArgsOptions {
  /** A file holding the agent's output_schema, for --output-schema. */
  outputSchemaFile?: string | null;
  /** The MCP servers of the user's config.toml, disabled unless the agent has one of that name. */
  userMcpServers?: readonly string[];
}

/** argv after `codex`; `logged` masks MCP environment values and headers (they may be secrets). */
export function codexArgs(
  request: RuntimeRequest,
  inRepo: boolean,
  options: CodexArgsOptions = {},
): { args: string[]; input?: string; logged: string[] } {
  const resume = request.resumeSessionId;
  const args = resume ? ['exec', 'resume', '--json'] : ['exec', '--json'];
  const logged = [...args];
  const push = (...values: string[]) => {
    args.push(...values);
    logged.push(...values);
  };
  if (request.model) push('-m', request.model);
  if (request.effort) push('-c', `model_reasoning_effort=${EFFORT[request.effort]}`);
  if (
    !flagsChoosePermissions(request.extraFlags, [
      '-s',
      '--sandbox',
      '--dangerously-bypass-approvals-and-sandbox',
      '--yolo',
    ])
  ) {
    const sandbox = SANDBOX[effectivePermissions(request.permissions, request.cwd)];
    // `exec resume` has no -s/-C: the same settings through config, and the process's cwd
    if (resume) push('-c', `sandbox_mode="${sandbox}"`);
    else push('-s', sandbox);
  }
  if (!resume) push('-C', request.cwd);
  if (!inRepo) push('--skip-git-repo-check');
  // a gate's verdict is not a conversation to come back to
  if (request.purpose === 'gate') push('--ephemeral');
  if (options.outputSchemaFile) push('--output-schema', options.outputSchemaFile);
  const secretTable = (key: string, values: Record<string, string>) => {
    const entries = Object.entries(values);
    if (entries.length === 0) return;
    args.push(
      '-c',
      `${key}={${entries.map(([k, v]) => `${JSON.stringify(k)}=${JSON.stringify(v)}`).join(',')}}`,
    );
    logged.push('-c', `${key}={${entries.map(([k]) => `${JSON.stringify(k)}="***"`).join(',')}}`);
  };
  for (const server of request.mcp) {
    const remote = mcpRemote(server);
    const name = remote?.name ?? mcpLaunch(server).name;
    const key = `mcp_servers.${tomlKey(name)}`;
    if (remote) {
      push('-c', `${key}.url=${JSON.stringify(remote.url)}`);
      secretTable(`${key}.http_headers`, remote.headers);
    } else {
      const launch = mcpLaunch(server);
      push('-c', `${key}.command=${JSON.stringify(launch.command)}`);
      push('-c', `${key}.args=${JSON.stringify(launch.args)}`);
      secretTable(`${key}.env`, launch.env);
    }
    // the agent was given this server to use: `codex exec` never asks, so a tool call that
    // needs approval is refused ("requires approval, but approval policy is never")
    push('-c', `${key}.default_tools_approval_mode="approve"`);
  }
  // only the agent's servers, not the user's own (as claude's --strict-mcp-config)
  const ours = new Set(request.mcp.map((m) => m.server));
  for (const name of options.userMcpServers ?? []) {
    if (!ours.has(name)) push('-c', `mcp_servers.${tomlKey(name)}.enabled=false`);
  }
  push(...request.extraFlags);
  const prompt =
    request.purpose === 'gate' && request.systemPrompt.trim()
      ? `${request.systemPrompt}\n\n${request.prompt}`
      : request.prompt;
  if (resume) push(resume);
  if (Buffer.byteLength(prompt) > ARGV_PROMPT_LIMIT) {
    push('-');
    return { args, input: prompt, logged };
  }
  push('--', prompt);
  return { args, logged };
}

function tomlKey(name: string): string {
  return /^[A-Za-z0-9_-]+$/.test(name) ? name : JSON.stringify(name);
}

function insideGitRepo(cwd: string): boolean {
  let dir = path.resolve(cwd);
  for (;;) {
    if (existsSync(path.join(dir, '.git'))) return true;
    const parent = path.dirname(dir);
    if (parent === dir) return false;
    dir = parent;
  }
}

type Json = Record<string, unknown>;

export class CodexStreamParser implements CliParser {
  private threadId: string | null = null;
  private messages: string[] = [];
  private usage: Json | null = null;
  private failed: string | null = null;
  private lastError: string | null = null;
  private streak = 0;
  /** Reconnects in a row after the key was refused (a 401). */
  private refusals = 0;
  private streakTimer: NodeJS.Timeout | null = null;
  private offlineTimer: NodeJS.Timeout | null = null;
  private control: { stop(error: RuntimeError): void } | null = null;

  constructor(
    private readonly now: () => Date = () => new Date(),
    private readonly maxReconnects = 10,
    private readonly reconnectWindowMs = 60_000,
    private readonly offlineWindowMs = 30_000,
  ) {}

  attach(control: { stop(error: RuntimeError): void }): void {
    this.control = control;
  }

  line(line: string): RuntimeEvent[] {
    const event = parseJsonLine(line);
    if (!event) return [];
    const out: RuntimeEvent[] = [];
    switch (event.type) {
      case 'thread.started':
        if (typeof event.thread_id === 'string') {
          this.threadId = event.thread_id;
          out.push({ type: 'session', id: event.thread_id });
        }
        break;
      case 'error': {
        const message = String(event.message ?? '');
        this.lastError = message;
        if (message.startsWith('Reconnecting...')) {
          out.push({ type: 'notice', level: 'info', message });
          this.reconnecting(message);
        }
        break;
      }
      case 'turn.failed':
        this.failed = String((event.error as Json | undefined)?.message ?? this.lastError ?? 'turn failed');
        break;
      case 'turn.completed':
        this.calm();
        this.usage = (event.usage as Json | undefined) ?? null;
        if (this.usage) out.push({ type: 'usage', usage: codexUsage(this.usage) });
        break;
      case 'item.started':
      case 'item.updated':
      case 'item.completed':
        this.item(event.type, (event.item ?? {}) as Json, out);
        break;
    }
    return out;
  }

  private item(type: string, item: Json, out: RuntimeEvent[]): void {
    if (item.type === 'error') {
      out.push({ type: 'notice', level: 'warning', message: String(item.message ?? '') });
      return;
    }
    this.calm();
    if (type !== 'item.completed') {
      if (type === 'item.started' && TOOL_ITEMS.has(String(item.type))) {
        out.push({
          type: 'tool_start',
          id: String(item.id ?? ''),
          name: toolName(item),
          input: toolInput(item),
        });
      }
      return;
    }
    switch (item.type) {
      case 'agent_message': {
        const text = String(item.text ?? '');
        const sep = this.messages.length > 0 ? '\n\n' : '';
        this.messages.push(text);
        out.push({ type: 'text', text: sep + text });
        break;
      }
      case 'reasoning':
        out.push({ type: 'thinking', text: String(item.text ?? '') });
        break;
      default:
        if (TOOL_ITEMS.has(String(item.type))) {
          const failed =
            item.status === 'failed' ||
            item.status === 'declined' ||
            (typeof item.exit_code === 'number' && item.exit_code !== 0) ||
            Boolean(item.error);
          out.push({
            type: 'tool_result',
            id: String(item.id ?? ''),
            output: toolOutput(item),
            ...(failed ? { isError: true } : {}),
          });
        }
    }
  }

  /**
   * One more reconnect in a row: ten of them or a minute of them (offline), or the second in a
   * row after a refused key (auth: Codex would try it five times), end the stage.
   */
  private reconnecting(message: string): void {
    this.streak += 1;
    this.refusals = classifyMessage(message) === 'auth' ? this.refusals + 1 : 0;
    if (this.streak >= this.maxReconnects || this.refusals === 2) {
      this.giveUp(message);
      return;
    }
    if (!this.streakTimer) {
      this.streakTimer = setTimeout(() => this.giveUp(this.lastError ?? message), this.reconnectWindowMs);
      this.streakTimer.unref();
    }
    // Codex's own retries are spent and it waits for the network, which offline is forever
    if (!this.offlineTimer && /waiting for network/i.test(message)) {
      this.offlineTimer = setTimeout(() => this.giveUp(this.lastError ?? message), this.offlineWindowMs);
      this.offlineTimer.unref();
    }
  }

  private giveUp(message: string): void {
    const detail = message.replace(/^Reconnecting\.\.\.\s*(?:\d+\/\d+\s*)?/, '').replace(/^\((.*)\)$/, '$1');
    const kind = classifyMessage(detail);
    const final: RuntimeErrorKind = kind === 'auth' || kind === 'rate_limited' ? kind : 'network';
    this.control?.stop(
      new RuntimeError(final, `codex kept reconnecting (${this.streak} times): ${detail}`, {
        ...(hintFor(final, 'codex') ? { hint: hintFor(final, 'codex')! } : {}),
      }),
    );
  }

  private calm(): void {
    this.streak = 0;
    this.refusals = 0;
    if (this.streakTimer) clearTimeout(this.streakTimer);
    if (this.offlineTimer) clearTimeout(this.offlineTimer);
    this.streakTimer = null;
    this.offlineTimer = null;
  }

  dispose(): void {
    this.calm();
  }

  meta(): Record<string, string | number | boolean> {
    return this.threadId ? { session_id: this.threadId } : {};
  }

  finish(exit: CliExit): ResultEvent | RuntimeError {
    if (!this.failed && exit.exitCode === 0) {
      return {
        type: 'result',
        text: this.messages.at(-1) ?? '',
        usage: codexUsage(this.usage ?? {}),
        meta: this.meta(),
      };
    }
    const message = this.failed ?? this.lastError ?? (stderrMessage(exit.stderr) || exitText(exit));
    const kind: RuntimeErrorKind =
      classifyMessage(`${message}\n${this.failed ? '' : exit.stderr}`) ?? 'crashed';
    const resetAt = kind === 'usage_limit' ? parseCodexReset(message, this.now()) : undefined;
    return new RuntimeError(kind, message, {
      ...(resetAt ? { resetAt } : {}),
      ...(hintFor(kind, 'codex') ? { hint: hintFor(kind, 'codex')! } : {}),
    });
  }
}

const TOOL_ITEMS = new Set([
  'command_execution',
  'mcp_tool_call',
  'file_change',
  'web_search',
  'collab_tool_call',
]);

function toolName(item: Json): string {
  if (item.type === 'command_execution') return 'shell';
  if (item.type === 'mcp_tool_call') return `${String(item.server ?? 'mcp')}.${String(item.tool ?? '')}`;
  return String(item.type);
}

function toolInput(item: Json): unknown {
  if (item.type === 'command_execution') return { command: item.command };
  if (item.type === 'mcp_tool_call') return item.arguments;
  if (item.type === 'file_change') return { changes: item.changes };
  if (item.type === 'web_search') return { query: item.query };
  return undefined;
}

function toolOutput(item: Json): string {
  if (item.type === 'command_execution') return String(item.aggregated_output ?? '');
  if (item.type === 'mcp_tool_call') {
    const error = item.error as Json | undefined;
    return error
      ? String(error.message ?? '')
      : JSON.stringify((item.result as Json | undefined)?.content ?? '');
  }
  if (item.type === 'file_change') return JSON.stringify(item.changes ?? []);
  return '';
}

/** Codex's own `Error: …` line when it printed one (before a stack backtrace), else the tail. */
function stderrMessage(stderr: string): string {
  const error = stderr.split('\n').find((l) => l.startsWith('Error'));
  return error?.trim() ?? stderrTail(stderr.replace(/^Reading additional input from stdin\.\.\.\n?/m, ''));
}

function exitText(exit: CliExit): string {
  return exit.signal
    ? `codex was killed by ${exit.signal}`
    : `codex exited with ${exit.exitCode} without finishing the turn`;
}

/** Codex counts cached tokens inside input_tokens; troupe's input_tokens leaves them out. */
export function codexUsage(u: Json) {
  const cached = num(u.cached_input_tokens);
  return {
    input_tokens: Math.max(0, num(u.input_tokens) - cached),
    output_tokens: num(u.output_tokens),
    ...(cached ? { cache_read_tokens: cached } : {}),
  };
}

/** `troupe doctor`: CODEX_API_KEY, else `codex login status`. */
export const codexLogin: LoginProbe = async ({ bin, env, run }) => {
  // 0.171 `exec` sends CODEX_API_KEY and ignores OPENAI_API_KEY (seen on the wire)
  if (env.CODEX_API_KEY) return { status: 'ok', detail: 'API key in the environment', fix: null };
  const status = await run(['login', 'status']);
  if (status && 'timedOut' in status) return probeTimedOut(`${bin} login status`, status.ms);
  if (status?.exitCode === 0) {
    return { status: 'ok', detail: (status.stdout || status.stderr).trim() || 'logged in', fix: null };
  }
  return {
    status: status ? 'auth' : 'unknown',
    detail: 'not logged in',
    fix: env.OPENAI_API_KEY
      ? '`codex exec` does not read OPENAI_API_KEY: run `printenv OPENAI_API_KEY | codex login --with-api-key`, or set CODEX_API_KEY'
      : 'run `codex login`, or set CODEX_API_KEY',
  };
};
