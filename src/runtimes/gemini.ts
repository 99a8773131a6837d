import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
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
import type { Usage } from '../core/usage.js';
import { classifyMessage, hintFor } from './classify.js';
import { type CliParser, type CliRuntimeOptions, num, type ResultEvent, runCli } from './cli-run.js';
import { makeGeminiRunHome, userGeminiHome, userHasMcpServers } from './gemini-home.js';
import { parseJsonLine } from './jsonl.js';
import { jsonObject, type LoginProbe } from './login-probe.js';
import { mcpServersJson } from './mcp.js';
import { effectivePermissions, flagsChoosePermissions } from './permissions.js';
import type { CliExit } from './process.js';
import { parseGeminiReset } from './reset-time.js';

/**
 * Gemini CLI headless: `gemini -o stream-json --prompt=<prompt>` (the `=` keeps a prompt that
 * starts with `-` from being read as flags). MCP servers and effort go through settings in a
 * home of the run's own (gemini-home.ts: Gemini reads a settings file troupe names only as the
 * user's own). Exit codes: 41 auth, 42 bad input (a lost session to resume), 55 untrusted
 * folder, and in stream-json mode an API error exits with its HTTP status & 255 (429 → 173).
 */

export interface GeminiOptions extends CliRuntimeOptions {
  /** Pass --skip-trust (config `trust_workspace`, default true). */
  trustWorkspace?: boolean;
  /** Where the run's generated home goes (default ~/.cache/troupe: it may hold MCP secrets). */
  settingsDir?: string;
}

const APPROVAL: Record<Permissions, string> = { read_only: 'default', edit: 'auto_edit', full: 'yolo' };
const THINKING_LEVEL: Record<Effort, string> = { low: 'LOW', medium: 'HIGH', high: 'HIGH', max: 'HIGH' };
const THINKING_BUDGET: Record<Effort, number> = { low: 1024, medium: 8192, high: 24576, max: 32768 };

export function geminiRuntime(options: GeminiOptions = {}): Runtime {
  const bin = options.bin ?? 'gemini';
  const now = options.now ?? (() => new Date());
  const trust = options.trustWorkspace ?? true;
  return {
    name: 'gemini',
    async *run(request) {
      const env: Record<string, string | undefined> = { ...options.env };
      const user = userGeminiHome(env);
      // a home of the run's own also keeps the user's MCP servers out of a task that has none
      const settings =
        geminiSettings(request) ??
        ((await userHasMcpServers(user)) ? { file: { mcpServers: {} }, model: request.model } : null);
      const temp: string[] = [];
      const gateSystem = request.purpose === 'gate' && request.systemPrompt.trim();
      let homes: { run: string; user: string } | null = null;
      if (settings || gateSystem) {
        const base = options.settingsDir ?? path.join(os.homedir(), '.cache', 'troupe');
        await mkdir(base, { recursive: true, mode: 0o700 });
        const dir = await mkdtemp(path.join(base, 'gemini-'));
        temp.push(dir);
        if (settings) {
          const made = await makeGeminiRunHome(dir, user, { mcpServers: {}, ...settings.file });
          env.GEMINI_CLI_HOME = made.home;
          homes = { run: made.home, user };
          for (const message of made.warnings) yield { type: 'notice', level: 'warning', message };
        }
        if (gateSystem) {
          const file = path.join(dir, 'system.md');
          await writeFile(file, request.systemPrompt, { mode: 0o600 });
          env.GEMINI_SYSTEM_MD = file;
        }
      }
      yield* runCli({
        runtime: 'gemini',
        bin,
        args: geminiArgs(request, { trust, model: settings?.model ?? request.model }),
        env,
        request,
        parser: new GeminiStreamParser(now, homes),
        install: RUNTIMES.gemini.install,
        temp,
      });
    },
  };
}

export function geminiArgs(
  request: RuntimeRequest,
  opts: { trust: boolean; model: string | null },
): string[] {
  const args = ['-o', 'stream-json'];
  if (opts.model) args.push('-m', opts.model);
  if (!flagsChoosePermissions(request.extraFlags, ['--approval-mode', '-y', '--yolo'])) {
    args.push('--approval-mode', APPROVAL[effectivePermissions(request.permissions, request.cwd)]);
  }
  if (opts.trust && !request.extraFlags.includes('--skip-trust')) args.push('--skip-trust');
  if (request.resumeSessionId) args.push('--resume', request.resumeSessionId);
  // only the agent's own servers, not the ones in the user's settings (as claude's --strict-mcp-config)
  if (request.mcp.length > 0 && !flagsChoosePermissions(request.extraFlags, ['--allowed-mcp-server-names'])) {
    args.push('--allowed-mcp-server-names', request.mcp.map((m) => m.server).join(','));
  }
  args.push(...request.extraFlags);
  args.push(`--prompt=${request.prompt}`);
  return args;
}

/**
 * The settings a request needs, or null: its MCP servers, and for an effort a model alias
 * whose thinking is set (Gemini has no effort flag).
 */
export function geminiSettings(
  request: RuntimeRequest,
): { file: Record<string, unknown>; model: string | null } | null {
  const file: Record<string, unknown> = {};
  let model = request.model;
  // trusted: Gemini offers an MCP server's tools in `default` and `auto_edit` only when it is
  if (request.mcp.length > 0) {
    file.mcpServers = Object.fromEntries(
      Object.entries(mcpServersJson(request.mcp, 'gemini')).map(([name, server]) => [
        name,
        { ...server, trust: true },
      ]),
    );
  }
  if (request.effort && request.model) {
    const v25 = /gemini-2\.5/.test(request.model);
    const alias = `troupe-${request.effort}-${request.model.replace(/[^A-Za-z0-9.-]/g, '-')}`;
    file.modelConfigs = {
      customAliases: {
        [alias]: {
          extends: v25 ? 'chat-base-2.5' : 'chat-base-3',
          modelConfig: {
            model: request.model,
            generateContentConfig: {
              thinkingConfig: v25
                ? { thinkingBudget: THINKING_BUDGET[request.effort] }
                : { thinkingLevel: THINKING_LEVEL[request.effort] },
            },
          },
        },
      },
    };
    model = alias;
  }
  return Object.keys(file).length > 0 ? { file, model } : null;
}

type Json = Record<string, unknown>;

export class GeminiStreamParser implements CliParser {
  private sessionId: string | null = null;
  /** The model answered in this run (text or a tool call): only then can its session resume. */
  private answered = false;
  private text = '';
  private result: Json | null = null;
  private lastError: string | null = null;

  constructor(
    private readonly now: () => Date = () => new Date(),
    /** The run's own home and the user's: messages name the user's files, which are the real ones. */
    private readonly homes: { run: string; user: string } | null = null,
  ) {}

  private userPaths(text: string): string {
    return this.homes ? text.split(this.homes.run).join(this.homes.user) : text;
  }

  line(line: string): RuntimeEvent[] {
    const event = parseJsonLine(line);
    if (!event) return [];
    switch (event.type) {
      case 'init':
        if (typeof event.session_id === 'string') {
          this.sessionId = event.session_id;
          return [{ type: 'session', id: event.session_id }];
        }
        return [];
      case 'message':
        if (event.role === 'assistant' && typeof event.content === 'string') {
          this.answered = true;
          this.text += event.content;
          return [{ type: 'text', text: event.content }];
        }
        return [];
      case 'tool_use':
        this.answered = true;
        return [
          {
            type: 'tool_start',
            id: String(event.tool_id ?? ''),
            name: String(event.tool_name ?? ''),
            input: event.parameters,
          },
        ];
      case 'tool_result': {
        const error = event.error as Json | undefined;
        return [
          {
            type: 'tool_result',
            id: String(event.tool_id ?? ''),
            output: String(event.output ?? error?.message ?? ''),
            ...(event.status === 'error' ? { isError: true } : {}),
          },
        ];
      }
      case 'error':
        if (event.severity === 'error') this.lastError = String(event.message ?? '');
        return [{ type: 'notice', level: 'warning', message: String(event.message ?? '') }];
      case 'result':
        this.result = event;
        return [];
      default:
        return [];
    }
  }

  /**
   * A failure's session, only when the model had answered in it: Gemini 0.61 cannot resume a
   * session whose first call failed (`Invalid session identifier`, or `No previous sessions
   * found for this project`), so after a 429 on the first call the stage must start afresh.
   */
  meta(): Record<string, string | number | boolean> {
    return this.sessionId && this.answered ? { session_id: this.sessionId } : {};
  }

  /** A settings file Gemini skipped or could not read explains what follows (a model it lacks). */
  stderrWarnings(stderr: string): string[] {
    return stripAnsi(stderr)
      .split('\n')
      .filter((l) => /^(Security Warning:|Warning: .*settings|Error in .*settings)/i.test(l.trim()))
      .map((l) => this.userPaths(l.trim()));
  }

  finish(exit: CliExit): ResultEvent | RuntimeError {
    const result = this.result;
    if (result?.status === 'success' && exit.exitCode === 0) {
      return {
        type: 'result',
        text: this.text,
        usage: geminiUsage(result.stats as Json | undefined),
        meta: this.sessionId ? { session_id: this.sessionId } : {},
      };
    }
    const resultMessage = String((result?.error as Json | undefined)?.message ?? this.lastError ?? '');
    const stderr = meaningfulStderr(exit.stderr);
    const kind = geminiKind(exit, resultMessage, stderr);
    const message = this.userPaths(
      firstLines(resultMessage) || firstLines(errorLine(stderr)) || exitText(exit),
    );
    const resetAt =
      kind === 'usage_limit' || kind === 'rate_limited'
        ? parseGeminiReset(`${resultMessage}\n${stderr}`, this.now())
        : undefined;
    return new RuntimeError(kind, message, {
      ...(resetAt ? { resetAt } : {}),
      ...(hintFor(kind, 'gemini') ? { hint: hintFor(kind, 'gemini')! } : {}),
    });
  }
}

function geminiKind(exit: CliExit, resultMessage: string, stderr: string): RuntimeErrorKind {
  switch (exit.exitCode) {
    case 41:
      return 'auth';
    case 55:
      return 'untrusted_directory';
    case 130:
      return 'cancelled';
  }
  const text = `${resultMessage}\n${stderr}`;
  if (/MODEL_CAPACITY_EXHAUSTED|No capacity available/i.test(text)) return 'overloaded';
  const fromText = classifyMessage(resultMessage) ?? classifyMessage(stderr);
  if (fromText) return fromText;
  switch (exit.exitCode) {
    case 173: // 429
      return 'rate_limited';
    case 145: // 401
    case 147: // 403
      return 'auth';
    case 244: // 500
    case 246: // 502
    case 247: // 503
      return 'overloaded';
  }
  return 'crashed';
}

/** stderr without Gemini's noise: warnings about the terminal, startup metrics, stack frames. */
function meaningfulStderr(stderr: string): string {
  return stripAnsi(stderr)
    .split('\n')
    .filter(
      (l) =>
        l.trim() &&
        !/^\s+at /.test(l) &&
        !/^(Warning: 256-color|Ripgrep is not available|\[STARTUP\]|Security Warning)/.test(l),
    )
    .join('\n');
}

function stripAnsi(text: string): string {
  return text.replace(/\u001b\[[0-9;]*m/g, '');
}

/** The line that says what went wrong: the last error line, else the first line. */
function errorLine(stderr: string): string {
  const lines = stderr.split('\n');
  const error = lines.findLast((l) => /Error|Please set an Auth method|trusted directory|failed/i.test(l));
  return (error ?? lines[0] ?? '').trim();
}

function firstLines(text: string): string {
  const kept = text.trim().split('\n').slice(0, 3).join('\n');
  return kept.length > 1000 ? `${kept.slice(0, 1000)}…` : kept;
}

function exitText(exit: CliExit): string {
  return exit.signal
    ? `gemini was killed by ${exit.signal}`
    : `gemini exited with ${exit.exitCode} without a result`;
}

/** `input` is what was not cached; `input_tokens` includes the cache. */
export function geminiUsage(stats: Json | undefined): Usage {
  if (!stats) return { input_tokens: 0, output_tokens: 0 };
  const cached = num(stats.cached);
  const input = typeof stats.input === 'number' ? stats.input : Math.max(0, num(stats.input_tokens) - cached);
  return {
    input_tokens: input,
    output_tokens: num(stats.output_tokens),
    ...(cached ? { cache_read_tokens: cached } : {}),
  };
}

/** `troupe doctor`: an auth method (Gemini has no status command), and a trusted folder if trust is off. */
export const geminiLogin: LoginProbe = async ({ cwd, env, home, trustWorkspace }) => {
  const settings = readJsonObject(path.join(env.GEMINI_CLI_HOME ?? home, '.gemini', 'settings.json'));
  const selected = (settings?.security as { auth?: { selectedType?: string } } | undefined)?.auth
    ?.selectedType;
  const hasAuth =
    env.GEMINI_API_KEY ||
    env.GOOGLE_GENAI_USE_VERTEXAI ||
    env.GOOGLE_GENAI_USE_GCA ||
    env.GOOGLE_API_KEY ||
    selected;
  if (!hasAuth) {
    return {
      status: 'auth',
      detail: 'no auth method (Gemini exits 41 headless)',
      fix: 'set GEMINI_API_KEY, or run `gemini` once and choose how to sign in',
    };
  }
  if (trustWorkspace === false && !trusted(cwd, env, home)) {
    return {
      status: 'untrusted_directory',
      detail: `${cwd} is not a trusted folder and trust_workspace is false`,
      fix: 'set `trust_workspace: true` in .troupe/config.yaml, or trust the folder in an interactive `gemini`',
    };
  }
  return {
    status: 'ok',
    detail: selected ? `auth: ${selected}` : 'credentials in the environment',
    fix: null,
  };
};

/** Gemini's trustedFolders.json: the folder, or a parent marked TRUST_PARENT / TRUST_FOLDER. */
function trusted(cwd: string, env: NodeJS.ProcessEnv, home: string): boolean {
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return true;
  const file = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH ?? path.join(home, '.gemini', 'trustedFolders.json');
  const rules = readJsonObject(file) ?? {};
  const dir = path.resolve(cwd);
  return Object.entries(rules).some(([folder, rule]) => {
    const f = path.resolve(folder);
    if (rule === 'TRUST_FOLDER') return dir === f || dir.startsWith(f + path.sep);
    if (rule === 'TRUST_PARENT') return dir.startsWith(path.dirname(f) + path.sep) || dir === path.dirname(f);
    return false;
  });
}

function readJsonObject(file: string): Record<string, unknown> | undefined {
  try {
    return jsonObject(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}
