import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Permissions } from '../core/pipeline-vocabulary.js';
import {
  type Runtime,
  RuntimeError,
  type RuntimeErrorKind,
  type RuntimeEvent,
  type RuntimeRequest,
} from '../core/runtime.js';
import { RUNTIMES } from '../core/runtimes.js';
import type { Usage } from '../core/usage.js';
import { classifyMessage, hintFor } from './classify.js';
import { claudeStreamSessions, keptUpArgs } from './claude-stream-session.js';
import {
  type CliParser,
  type CliRuntimeOptions,
  num,
  type ResultEvent,
  runCli,
  stderrTail,
} from './cli-run.js';
import { parseJsonLine } from './jsonl.js';
import { jsonObject, type LoginProbe, probeTimedOut } from './login-probe.js';
import { mcpLaunch, mcpServersJson } from './mcp.js';
import { effectivePermissions, flagsChoosePermissions } from './permissions.js';
import type { CliExit } from './process.js';
import { parseClaudeReset } from './reset-time.js';

/**
 * Claude Code headless: `claude -p --output-format stream-json --verbose
 * --include-partial-messages`, one JSON event a line. Failures come back as a `result` with
 * `is_error: true` (its subtype still `success`), so they are classified from that result, the
 * synthetic assistant message's `error`, `api_error_status`, the `rate_limit_event` and the text.
 */

export type ClaudeOptions = CliRuntimeOptions;

/** Longer prompts go through stdin: one argv string may not exceed 128 KiB on Linux. */
export const ARGV_PROMPT_LIMIT = 100_000;

/**
 * Claude retries a refused key or login ten times over about three minutes. The run stops at
 * the second refusal in a row, not the first: one 401 can be an expired OAuth access token,
 * which claude refreshes before its retry.
 */
export const AUTH_RETRIES_BEFORE_STOP = 2;

const PERMISSION_MODES: Record<Permissions, string> = {
  read_only: 'default',
  edit: 'acceptEdits',
  full: 'bypassPermissions',
};

export function claudeRuntime(options: ClaudeOptions = {}): Runtime {
  const bin = options.bin ?? 'claude';
  const now = options.now ?? (() => new Date());
  return {
    name: 'claude',
    async *run(request) {
      // `resume: true` without MCP servers (those would outlive the stage): one process a conversation
      if (request.keepSession && request.purpose === 'stage' && request.mcp.length === 0) {
        const launch = {
          bin,
          args: keptUpArgs(claudeArgs({ ...request, resumeSessionId: null, prompt: '' }, null).args),
          install: RUNTIMES.claude.install,
        };
        yield* claudeStreamSessions.run(
          request,
          options.env ? { ...launch, env: options.env } : launch,
          new ClaudeStreamParser(now),
        );
        return;
      }
      const temp: string[] = [];
      let mcpConfig: string | null = null;
      if (request.mcp.length > 0) {
        const dir = await mkdtemp(path.join(os.tmpdir(), 'troupe-claude-'));
        temp.push(dir);
        mcpConfig = path.join(dir, 'mcp.json');
        await writeFile(mcpConfig, JSON.stringify({ mcpServers: mcpServersJson(request.mcp, 'claude') }), {
          mode: 0o600,
        });
      }
      const { args, input } = claudeArgs(request, mcpConfig);
      yield* runCli({
        runtime: 'claude',
        bin,
        args,
        ...(input !== undefined ? { input } : {}),
        ...(options.env ? { env: options.env } : {}),
        request,
        parser: new ClaudeStreamParser(now),
        install: RUNTIMES.claude.install,
        temp,
      });
    },
  };
}

/** The argv after `claude`, and the prompt for stdin when it is too long for argv. */
export function claudeArgs(
  request: RuntimeRequest,
  mcpConfig: string | null,
): { args: string[]; input?: string } {
  const args = ['-p', '--output-format', 'stream-json', '--verbose', '--include-partial-messages'];
  if (request.model) args.push('--model', request.model);
  if (request.effort) args.push('--effort', request.effort);
  if (
    !flagsChoosePermissions(request.extraFlags, [
      '--permission-mode',
      '--dangerously-skip-permissions',
      '--allow-dangerously-skip-permissions',
    ])
  ) {
    args.push('--permission-mode', PERMISSION_MODES[effectivePermissions(request.permissions, request.cwd)]);
  }
  // only the agent's own MCP servers (not the user's), and their tools allowed: `default` and
  // `acceptEdits` refuse an MCP tool call that no rule allows
  if (mcpConfig) args.push('--mcp-config', mcpConfig);
  args.push('--strict-mcp-config');
  if (request.mcp.length > 0)
    args.push('--allowedTools', request.mcp.map((m) => `mcp__${mcpLaunch(m).name}`).join(','));
  if (request.resumeSessionId) args.push('--resume', request.resumeSessionId);
  // the final answer held to the agent's output_schema (Claude's StructuredOutput tool)
  if (request.outputSchema) args.push('--json-schema', JSON.stringify(request.outputSchema));
  // the CLI stops itself at what is left of the task's budget, between two model calls
  if (request.maxBudgetUsd != null) args.push('--max-budget-usd', budgetFlag(request.maxBudgetUsd));
  if (request.purpose === 'gate') {
    // a stage's instructions are already its prompt; a gate judges with its own instructions
    // on top of Claude Code's (which say how to use its tools), and leaves no session behind
    if (request.systemPrompt.trim()) args.push('--append-system-prompt', request.systemPrompt);
    args.push('--no-session-persistence');
  }
  args.push(...request.extraFlags);
  if (Buffer.byteLength(request.prompt) > ARGV_PROMPT_LIMIT) return { args, input: request.prompt };
  args.push('--', request.prompt);
  return { args };
}

/** Dollars for --max-budget-usd, rounded down to a hundredth of a cent and never 0. */
function budgetFlag(usd: number): string {
  return String(Math.max(0.0001, Math.floor(usd * 10_000) / 10_000));
}

type Json = Record<string, unknown>;

/** stream-json lines → events; pure, so it is benchmarked and tested without a process. */
export class ClaudeStreamParser implements CliParser {
  private sessionId: string | null = null;
  private streaming = false;
  private text = '';
  private lastMessageId: string | null = null;
  private result: Json | null = null;
  private syntheticError: string | null = null;
  private rejected: Json | null = null;
  private lastRetry: Json | null = null;
  private authRetries = 0;
  /** Where claude took its credentials from (`init.apiKeySource`), for the hint of a refusal. */
  private keySource: string | null = null;
  private control: { stop(error: RuntimeError): void } | null = null;
  /** The last lines that were not JSON (text-mode output, a crash): a message of last resort. */
  private plain: string[] = [];

  constructor(private readonly now: () => Date = () => new Date()) {}

  attach(control: { stop(error: RuntimeError): void }): void {
    this.control = control;
  }

  line(line: string): RuntimeEvent[] {
    const event = parseJsonLine(line);
    if (!event) {
      if (line.trim()) this.plain = [...this.plain.slice(-19), line.trim()];
      return [];
    }
    const out: RuntimeEvent[] = [];
    const sid = event.session_id;
    if (typeof sid === 'string' && sid && sid !== this.sessionId && event.type !== 'result') {
      this.sessionId = sid;
      out.push({ type: 'session', id: sid });
    }
    switch (event.type) {
      case 'stream_event':
        this.streamEvent(event.event as Json | undefined, out);
        break;
      case 'assistant':
        this.assistant(event, out);
        break;
      case 'user':
        this.toolResults(event, out);
        break;
      case 'system':
        if (event.subtype === 'init' && typeof event.apiKeySource === 'string')
          this.keySource = event.apiKeySource;
        if (event.subtype === 'api_retry') {
          this.lastRetry = event;
          this.authRetries = event.error === 'authentication_failed' ? this.authRetries + 1 : 0;
          if (this.authRetries === AUTH_RETRIES_BEFORE_STOP) this.control?.stop(this.authRefused());
          out.push({
            type: 'notice',
            level: 'info',
            message: `API retry ${num(event.attempt)}/${num(event.max_retries)} (${String(event.error ?? 'error')}${event.error_status ? ` ${event.error_status}` : ''})`,
          });
        }
        break;
      case 'rate_limit_event': {
        const info = (event.rate_limit_info ?? {}) as Json;
        if (info.status === 'rejected') this.rejected = info;
        else if (info.status === 'allowed_warning') {
          out.push({
            type: 'notice',
            level: 'warning',
            message: `${String(info.rateLimitType ?? 'usage')} limit ${Math.round(num(info.utilization) * 100)}% used`,
          });
        }
        break;
      }
      case 'result': {
        this.result = event;
        const refused = refusedToolCalls(event.permission_denials);
        if (refused) out.push({ type: 'notice', level: 'warning', message: refused });
        break;
      }
    }
    return out;
  }

  private streamEvent(raw: Json | undefined, out: RuntimeEvent[]): void {
    if (!raw) return;
    if (raw.type === 'message_start') {
      const id = (raw.message as Json | undefined)?.id;
      this.separate(typeof id === 'string' ? id : null, out);
      return;
    }
    if (raw.type !== 'content_block_delta') return;
    const delta = raw.delta as Json | undefined;
    if (delta?.type === 'text_delta' && typeof delta.text === 'string') {
      this.streaming = true;
      this.text += delta.text;
      out.push({ type: 'text', text: delta.text });
    } else if (delta?.type === 'thinking_delta' && typeof delta.thinking === 'string') {
      this.streaming = true;
      out.push({ type: 'thinking', text: delta.thinking });
    }
  }

  /** Messages of one turn are joined by a blank line, as a reader would see them. */
  private separate(messageId: string | null, out: RuntimeEvent[]): void {
    if (messageId && messageId !== this.lastMessageId) {
      if (this.lastMessageId && this.text && !this.text.endsWith('\n')) {
        this.text += '\n\n';
        out.push({ type: 'text', text: '\n\n' });
      }
      this.lastMessageId = messageId;
    }
  }

  private assistant(event: Json, out: RuntimeEvent[]): void {
    const message = (event.message ?? {}) as Json;
    if (message.model === '<synthetic>' || typeof event.error === 'string') {
      this.syntheticError = typeof event.error === 'string' ? event.error : 'unknown';
      return;
    }
    const content = Array.isArray(message.content) ? (message.content as Json[]) : [];
    for (const block of content) {
      if (block.type === 'tool_use') {
        out.push({
          type: 'tool_start',
          id: String(block.id ?? ''),
          name: String(block.name ?? ''),
          input: block.input,
        });
      } else if (!this.streaming && block.type === 'text' && typeof block.text === 'string') {
        this.separate(typeof message.id === 'string' ? message.id : null, out);
        this.text += block.text;
        out.push({ type: 'text', text: block.text });
      } else if (!this.streaming && block.type === 'thinking' && typeof block.thinking === 'string') {
        out.push({ type: 'thinking', text: block.thinking });
      }
    }
  }

  private toolResults(event: Json, out: RuntimeEvent[]): void {
    const content = ((event.message ?? {}) as Json).content;
    if (!Array.isArray(content)) return;
    for (const block of content as Json[]) {
      if (block.type !== 'tool_result') continue;
      out.push({
        type: 'tool_result',
        id: String(block.tool_use_id ?? ''),
        output: toolOutput(block.content),
        ...(block.is_error === true ? { isError: true } : {}),
      });
    }
  }

  /** The error for credentials claude keeps retrying with although the API refused them. */
  private authRefused(): RuntimeError {
    const status = this.lastRetry?.error_status;
    const source = this.keySource && /^[A-Z][A-Z0-9_]*$/.test(this.keySource) ? this.keySource : null;
    return new RuntimeError(
      'auth',
      `the Anthropic API refused claude's credentials${typeof status === 'number' ? ` (${status})` : ''}: stopped at retry ${this.authRetries} rather than retrying for minutes`,
      {
        hint: source
          ? `${source} was refused: set a valid key in it, or unset it and log in with \`claude /login\``
          : hintFor('auth', 'claude')!,
      },
    );
  }

  meta(): Record<string, string | number | boolean> {
    return this.sessionId ? { session_id: this.sessionId } : {};
  }

  finish(exit: CliExit): ResultEvent | RuntimeError {
    const result = this.result;
    if (
      result &&
      result.is_error !== true &&
      (result.subtype === 'success' || result.subtype === undefined)
    ) {
      // with --json-schema the answer is `structured_output` (the StructuredOutput tool's input)
      const text =
        result.structured_output !== undefined && result.structured_output !== null
          ? JSON.stringify(result.structured_output)
          : typeof result.result === 'string' && result.result
            ? result.result
            : this.text;
      const denials = Array.isArray(result.permission_denials) ? result.permission_denials.length : 0;
      const sessionId = typeof result.session_id === 'string' ? result.session_id : this.sessionId;
      return {
        type: 'result',
        text,
        usage: claudeUsage(result),
        meta: {
          ...(sessionId ? { session_id: sessionId } : {}),
          ...(typeof result.num_turns === 'number' ? { num_turns: result.num_turns } : {}),
          ...(denials > 0 ? { permission_denials: denials } : {}),
        },
      };
    }
    return this.classify(exit);
  }

  private classify(exit: CliExit): RuntimeError {
    const result = this.result;
    const errors = Array.isArray(result?.errors) ? (result.errors as unknown[]).map(String).join('; ') : '';
    const message =
      (typeof result?.result === 'string' && result.result) ||
      errors ||
      stderrTail(exit.stderr) ||
      this.plain.slice(-5).join('\n') ||
      (result ? `claude ended with ${String(result.subtype)}` : exitText(exit));
    const status = typeof result?.api_error_status === 'number' ? result.api_error_status : null;
    const error = (kind: RuntimeErrorKind, resetAt?: Date) =>
      new RuntimeError(kind, message, {
        ...(resetAt ? { resetAt } : {}),
        ...(hintFor(kind, 'claude') ? { hint: hintFor(kind, 'claude')! } : {}),
      });

    if (this.rejected) {
      const resetsAt = num(this.rejected.resetsAt);
      return error(
        'usage_limit',
        resetsAt ? new Date(resetsAt * 1000) : parseClaudeReset(message, this.now()),
      );
    }
    const fromText = classifyMessage(`${message}\n${exit.stderr}`);
    if (fromText === 'usage_limit') return error('usage_limit', parseClaudeReset(message, this.now()));
    if (result?.subtype === 'error_max_turns') return error('crashed');
    if (result?.subtype === 'error_max_budget_usd') {
      return new RuntimeError('budget', `claude stopped at what was left of the task's budget: ${message}`, {
        hint: hintFor('budget', 'claude')!,
      });
    }
    if (fromText && fromText !== 'overloaded' && fromText !== 'rate_limited') return error(fromText);
    switch (this.syntheticError) {
      case 'authentication_failed':
        return error('auth');
      case 'billing_error':
        return error('quota_billing');
      case 'rate_limit':
        return error('rate_limited');
    }
    if (status === 429) return error('rate_limited');
    if (status === 401 || status === 403) return error('auth');
    if (status === 529 || (status !== null && status >= 500)) return error('overloaded');
    if (fromText) return error(fromText);
    if (this.syntheticError === 'server_error') return error('overloaded');
    if (this.lastRetry?.error === 'authentication_failed') return error('auth');
    if (this.lastRetry?.error === 'unknown' && this.lastRetry.error_status === null) return error('network');
    return error('crashed');
  }
}

/** `result.permission_denials` in a line: what the permission mode refused. */
function refusedToolCalls(denials: unknown): string | null {
  if (!Array.isArray(denials) || denials.length === 0) return null;
  const calls = (denials as Json[]).map((d) => {
    const name = String(d.tool_name ?? 'a tool');
    const command = (d.tool_input as Json | undefined)?.command;
    return typeof command === 'string' ? `${name} (${command.split('\n')[0]?.slice(0, 80)})` : name;
  });
  const n = calls.length;
  return `claude refused ${n} tool call${n === 1 ? '' : 's'} its permission mode does not allow: ${calls.join(', ')} — give the agent \`permissions: edit\` or \`full\`, or allow the tool with cli_flags [--allowedTools, <tool>]`;
}

function exitText(exit: CliExit): string {
  return exit.signal
    ? `claude was killed by ${exit.signal}`
    : `claude exited with ${exit.exitCode} without a result`;
}

function toolOutput(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && 'text' in part ? String((part as Json).text) : ''))
      .join('');
  }
  return content === undefined ? '' : JSON.stringify(content);
}

/**
 * Tokens from `modelUsage` (every model the run used, side calls included, matching the cost)
 * or else `result.usage`. `input_tokens` counts what was not read from the cache.
 */
export function claudeUsage(result: Json): Usage {
  const cost = num(result.total_cost_usd);
  const models =
    result.modelUsage && typeof result.modelUsage === 'object'
      ? Object.values(result.modelUsage as Json)
      : [];
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  if (models.length > 0) {
    for (const m of models as Json[]) {
      input += num(m.inputTokens) + num(m.cacheCreationInputTokens);
      output += num(m.outputTokens);
      cacheRead += num(m.cacheReadInputTokens);
    }
  } else {
    const u = (result.usage ?? {}) as Json;
    input = num(u.input_tokens) + num(u.cache_creation_input_tokens);
    output = num(u.output_tokens);
    cacheRead = num(u.cache_read_input_tokens);
  }
  return {
    input_tokens: input,
    output_tokens: output,
    ...(cacheRead ? { cache_read_tokens: cacheRead } : {}),
    ...(cost ? { cost_usd: cost } : {}),
  };
}

/** `troupe doctor`: credentials in the environment, else `claude auth status`. */
export const claudeLogin: LoginProbe = async ({ bin, env, run }) => {
  if (env.ANTHROPIC_API_KEY || env.CLAUDE_CODE_OAUTH_TOKEN) {
    return { status: 'ok', detail: 'credentials in the environment', fix: null };
  }
  const status = await run(['auth', 'status']);
  if (status && 'timedOut' in status) return probeTimedOut(`${bin} auth status`, status.ms);
  const parsed = jsonObject(status?.stdout ?? '');
  if (parsed?.loggedIn === true) {
    return { status: 'ok', detail: `logged in (${String(parsed.authMethod ?? 'claude.ai')})`, fix: null };
  }
  return {
    status: status ? 'auth' : 'unknown',
    detail: 'not logged in',
    fix: 'run `claude` once and /login (or `claude setup-token`), or set ANTHROPIC_API_KEY',
  };
};
