import { existsSync, readFileSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import { messageOf } from '../core/errors.js';
import { isTroupeServer } from '../core/mcp-call.js';
import { endpointBase, endpointKeyVar } from '../core/openai-endpoint.js';
import type { AgentNode, Pipeline } from '../core/pipeline.js';
import { isOnPath } from '../pipeline/on-path.js';
import { CLAUDE_INSTALL } from './claude.js';
import { CODEX_INSTALL } from './codex.js';
import { GEMINI_INSTALL } from './gemini.js';
import { stripJsonComments, userGeminiHome } from './gemini-home.js';
import { CLI_RUNTIMES, type CliRuntime, cliBin } from './installed.js';
import { mcpLaunch } from './mcp.js';
import { acceptsReasoningEffort } from './openai.js';

/**
 * What `troupe doctor` looks at: each CLI (installed? which version? can it run headless here?),
 * the MCP commands a pipeline starts, and the key variables of its openai agents. The probes
 * spend no tokens: they read the CLI's own login status and the environment, never a prompt.
 */

export type CliName = CliRuntime;
/** `timed_out`: a probe did not answer in time (a busy machine), which says nothing about the CLI. */
export type Readiness = 'ok' | 'missing_cli' | 'auth' | 'untrusted_directory' | 'timed_out' | 'unknown';

export interface CliCheck {
  runtime: CliName;
  bin: string;
  installed: boolean;
  version: string | null;
  status: Readiness;
  detail: string;
  fix: string | null;
  /** Some agent of the pipeline uses it. */
  used: boolean;
}

export interface McpCheck {
  agent: string;
  server: string;
  command: string;
  found: boolean;
  fix: string | null;
}

export interface KeyCheck {
  agent: string;
  variable: string;
  set: boolean;
  fix: string | null;
}

/** Something about how an agent will run that the user should know before it does. */
export interface RunWarning {
  agent: string;
  message: string;
  fix: string;
  /** The agent's stages will fail this way, not only lose something. */
  blocking: boolean;
}

export interface DoctorReport {
  /** Whether a pipeline was checked (without one, only the CLIs are). */
  pipeline: boolean;
  clis: CliCheck[];
  mcp: McpCheck[];
  keys: KeyCheck[];
  warnings: RunWarning[];
  /** Every runtime the pipeline uses is ready, its MCP commands and keys are there, nothing blocks. */
  ok: boolean;
}

export interface DoctorOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  pipeline?: Pipeline | null;
  trustWorkspace?: boolean;
  bins?: Partial<Record<CliName, string>>;
  home?: string;
  /** How long each probe (`--version`, the login status) may take; default 15 s. */
  probeTimeoutMs?: number;
  /** Default: this process's uid (0 is root). */
  uid?: number;
}

const INSTALL: Record<CliName, string> = {
  claude: CLAUDE_INSTALL,
  gemini: GEMINI_INSTALL,
  codex: CODEX_INSTALL,
};

export async function runDoctor(options: DoctorOptions): Promise<DoctorReport> {
  const env = options.env ?? process.env;
  const used = new Set(
    (options.pipeline?.agents ?? []).flatMap((a) =>
      a.type === 'agent' ? [a.runtime, ...(a.gate?.runtime ? [a.gate.runtime] : [])] : [],
    ),
  );
  const names: CliName[] = [...CLI_RUNTIMES];
  const clis = await Promise.all(
    names.map(async (runtime) => {
      const check = await checkCli(runtime, options.bins?.[runtime] ?? cliBin(runtime, env), {
        ...options,
        env,
      });
      return { ...check, used: used.has(runtime) };
    }),
  );
  const mcp: McpCheck[] = [];
  const keys: KeyCheck[] = [];
  for (const agent of options.pipeline?.agents ?? []) {
    if (agent.type !== 'agent') continue;
    // troupe's own server is this troupe, and a remote one has no command: nothing to find
    for (const server of agent.mcp.filter((s) => !isTroupeServer(s) && !s.url).map(mcpLaunch)) {
      const found = path.isAbsolute(server.command)
        ? existsSync(server.command)
        : isOnPath(server.command, env.PATH);
      mcp.push({
        agent: agent.id,
        server: server.name,
        command: server.command,
        found,
        fix: found
          ? null
          : `install \`${server.command}\` or fix the \`command\` of MCP server ${server.name}`,
      });
    }
    if (agent.runtime === 'openai') {
      const endpoint = {
        baseUrl: agent.openai?.base_url ?? null,
        apiKeyEnv: agent.openai?.api_key_env ?? null,
      };
      // a local server (Ollama, vLLM) gets no key unless the pipeline names one
      const variable = endpointKeyVar(endpoint, endpointBase(endpoint, env));
      if (!variable) continue;
      const set = Boolean(env[variable]);
      keys.push({ agent: agent.id, variable, set, fix: set ? null : `export ${variable}=…` });
    }
  }
  const warnings = (options.pipeline?.agents ?? []).flatMap((agent) =>
    agent.type === 'agent'
      ? agentWarnings(agent, {
          env,
          uid: options.uid ?? process.getuid?.() ?? -1,
          home: options.home ?? os.homedir(),
        })
      : [],
  );
  const ok =
    clis.every((c) => !c.used || c.status === 'ok') &&
    mcp.every((m) => m.found) &&
    keys.every((k) => k.set) &&
    warnings.every((w) => !w.blocking);
  return { pipeline: Boolean(options.pipeline), clis, mcp, keys, warnings, ok };
}

/**
 * What the runtimes cannot do for this agent as it is configured here: pure, from the agent,
 * the environment and the files Gemini would read.
 */
export function agentWarnings(
  agent: AgentNode,
  machine: { env: NodeJS.ProcessEnv; uid: number; home: string },
): RunWarning[] {
  const out: RunWarning[] = [];
  const warn = (message: string, fix: string, blocking = false) =>
    out.push({ agent: agent.id, message, fix, blocking });
  const flags = agent.cli_flags;
  const flagValue = (name: string) => {
    const at = flags.findIndex((f) => f === name || f.startsWith(`${name}=`));
    if (at < 0) return null;
    return flags[at]!.includes('=') ? flags[at]!.slice(name.length + 1) : (flags[at + 1] ?? '');
  };
  const full = agent.permissions === 'full';
  const runtimes = [agent.runtime, ...(agent.gate?.runtime ? [agent.gate.runtime] : [])];
  if (runtimes.includes('claude') && full && machine.uid === 0 && machine.env.IS_SANDBOX !== '1') {
    warn(
      'claude refuses `permissions: full` (bypassPermissions) as root: every stage fails with permission_denied',
      'in a sandbox or container, set IS_SANDBOX=1; or give the agent `permissions: edit`',
      true,
    );
  }
  if (
    agent.mcp.length > 0 &&
    agent.runtime === 'claude' &&
    /plan/.test(flagValue('--permission-mode') ?? '')
  ) {
    warn(
      "claude's plan mode in cli_flags refuses the agent's MCP tool calls",
      'remove --permission-mode from cli_flags and set `permissions:`',
    );
  }
  if (agent.runtime === 'gemini') {
    if (agent.mcp.length > 0) {
      const allowed = flagValue('--allowed-mcp-server-names');
      const left =
        allowed === null ? [] : agent.mcp.map((m) => m.server).filter((n) => !allowed.split(',').includes(n));
      if (left.length > 0) {
        warn(
          `gemini will not load MCP server${left.length === 1 ? '' : 's'} ${left.join(', ')}: cli_flags --allowed-mcp-server-names leaves ${left.length === 1 ? 'it' : 'them'} out`,
          "drop --allowed-mcp-server-names from cli_flags (troupe passes the agent's servers)",
        );
      }
      if (flagValue('--approval-mode') === 'plan') {
        warn(
          "gemini's plan mode in cli_flags offers no MCP tools, trusted or not",
          'remove --approval-mode from cli_flags and set `permissions:`',
        );
      }
    }
    const wantsSettings = agent.mcp.length > 0 || Boolean(agent.effort && agent.effort !== 'auto');
    if (agent.effort && agent.effort !== 'auto' && (!agent.model || agent.model === 'auto')) {
      warn(
        'gemini has no effort flag: troupe sets effort through a model alias, which needs a `model`',
        'give the agent a `model:` (for example gemini-2.5-flash)',
      );
    }
    if (wantsSettings) out.push(...geminiSettingsWarnings(agent.id, machine));
  }
  if (
    agent.runtime === 'openai' &&
    agent.effort &&
    agent.effort !== 'auto' &&
    agent.model &&
    agent.model !== 'auto'
  ) {
    const base = endpointBase({ baseUrl: agent.openai?.base_url ?? null, apiKeyEnv: null }, machine.env);
    if (!acceptsReasoningEffort(base, agent.model)) {
      warn(
        `effort is not sent: ${agent.model} at ${base} is not one of OpenAI's reasoning models, which alone take reasoning_effort`,
        'remove `effort:`, or use an OpenAI reasoning model (o3, o4-mini, gpt-5…)',
      );
    }
  }
  return out;
}

/** Settings Gemini would skip or cannot read, so that what troupe puts in them is lost. */
function geminiSettingsWarnings(
  agent: string,
  machine: { env: NodeJS.ProcessEnv; home: string },
): RunWarning[] {
  const out: RunWarning[] = [];
  const userSettings = path.join(
    userGeminiHome({ GEMINI_CLI_HOME: machine.env.GEMINI_CLI_HOME ?? machine.home }),
    '.gemini',
    'settings.json',
  );
  if (existsSync(userSettings)) {
    try {
      JSON.parse(stripJsonComments(readFileSync(userSettings, 'utf8')));
    } catch (error) {
      out.push({
        agent,
        message: `${userSettings} is not valid JSON (${messageOf(error)}): gemini fails to start with it`,
        fix: 'fix the file (gemini reads JSON with comments)',
        blocking: true,
      });
    }
  }
  // Gemini reads these only when they and every folder above them are root's and not writable by others
  const system = [
    machine.env.GEMINI_CLI_SYSTEM_SETTINGS_PATH ?? '/etc/gemini-cli/settings.json',
    machine.env.GEMINI_CLI_SYSTEM_DEFAULTS_PATH ?? '/etc/gemini-cli/system-defaults.json',
  ];
  for (const file of system) {
    const insecure = insecurePath(file);
    if (insecure) {
      out.push({
        agent,
        message: `gemini skips ${file}: ${insecure}`,
        fix: `sudo chown root:root and chmod go-w it and the folders above it, or remove it`,
        blocking: false,
      });
    }
  }
  return out;
}

/** Why Gemini would call a system settings file insecure (its `isFileAndDirectorySecureSync`), or null. */
function insecurePath(file: string): string | null {
  if (!existsSync(file)) return null;
  for (let p = path.resolve(file); ; p = path.dirname(p)) {
    const stat = statSync(p);
    if (stat.uid !== 0) return `${p} is not owned by root`;
    if ((stat.mode & 0o022) !== 0) return `${p} is writable by group or others`;
    if (path.dirname(p) === p) return null;
  }
}

async function checkCli(
  runtime: CliName,
  bin: string,
  options: DoctorOptions & { env: NodeJS.ProcessEnv },
): Promise<Omit<CliCheck, 'used'>> {
  const base = { runtime, bin };
  const version = await run(bin, ['--version'], options);
  if (version && 'timedOut' in version) {
    return {
      ...base,
      installed: true,
      version: null,
      status: 'timed_out',
      detail: `\`${bin} --version\` did not answer in ${seconds(version.ms)} (a busy machine?)`,
      fix: `run \`troupe doctor\` again, or check that \`${bin} --version\` works`,
    };
  }
  if (version === null) {
    return {
      ...base,
      installed: false,
      version: null,
      status: 'missing_cli',
      detail: `\`${bin}\` is not installed (or not on PATH)`,
      fix: INSTALL[runtime],
    };
  }
  const found = { ...base, installed: true, version: version.stdout.trim().split('\n')[0] ?? '' };
  const env = options.env;
  const home = options.home ?? os.homedir();
  switch (runtime) {
    case 'claude': {
      if (env.ANTHROPIC_API_KEY || env.CLAUDE_CODE_OAUTH_TOKEN) {
        return { ...found, status: 'ok', detail: 'credentials in the environment', fix: null };
      }
      const status = await run(bin, ['auth', 'status'], options);
      if (status && 'timedOut' in status) return probeTimedOut(found, `${bin} auth status`, status.ms);
      const parsed = safeJson(status?.stdout ?? '');
      if (parsed?.loggedIn === true) {
        return {
          ...found,
          status: 'ok',
          detail: `logged in (${String(parsed.authMethod ?? 'claude.ai')})`,
          fix: null,
        };
      }
      return {
        ...found,
        status: status ? 'auth' : 'unknown',
        detail: 'not logged in',
        fix: 'run `claude` once and /login (or `claude setup-token`), or set ANTHROPIC_API_KEY',
      };
    }
    case 'codex': {
      // 0.171 `exec` sends CODEX_API_KEY and ignores OPENAI_API_KEY (seen on the wire)
      if (env.CODEX_API_KEY) {
        return { ...found, status: 'ok', detail: 'API key in the environment', fix: null };
      }
      const status = await run(bin, ['login', 'status'], options);
      if (status && 'timedOut' in status) return probeTimedOut(found, `${bin} login status`, status.ms);
      if (status?.exitCode === 0) {
        return {
          ...found,
          status: 'ok',
          detail: (status.stdout || status.stderr).trim() || 'logged in',
          fix: null,
        };
      }
      return {
        ...found,
        status: status ? 'auth' : 'unknown',
        detail: 'not logged in',
        fix: env.OPENAI_API_KEY
          ? '`codex exec` does not read OPENAI_API_KEY: run `printenv OPENAI_API_KEY | codex login --with-api-key`, or set CODEX_API_KEY'
          : 'run `codex login`, or set CODEX_API_KEY',
      };
    }
    case 'gemini': {
      const settings = readJson(path.join(env.GEMINI_CLI_HOME ?? home, '.gemini', 'settings.json'));
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
          ...found,
          status: 'auth',
          detail: 'no auth method (Gemini exits 41 headless)',
          fix: 'set GEMINI_API_KEY, or run `gemini` once and choose how to sign in',
        };
      }
      if (options.trustWorkspace === false && !trusted(options.cwd, env, home)) {
        return {
          ...found,
          status: 'untrusted_directory',
          detail: `${options.cwd} is not a trusted folder and trust_workspace is false`,
          fix: 'set `trust_workspace: true` in .troupe/config.yaml, or trust the folder in an interactive `gemini`',
        };
      }
      return {
        ...found,
        status: 'ok',
        detail: selected ? `auth: ${selected}` : 'credentials in the environment',
        fix: null,
      };
    }
  }
}

function probeTimedOut(
  found: Omit<CliCheck, 'used' | 'status' | 'detail' | 'fix'>,
  probe: string,
  ms: number,
) {
  return {
    ...found,
    status: 'timed_out' as const,
    detail: `\`${probe}\` did not answer in ${seconds(ms)} (a busy machine?)`,
    fix: `run \`troupe doctor\` again, or check that \`${probe}\` works`,
  };
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}

/** A probe's output; `timedOut` when it did not end in time; null when it could not start. */
type ProbeOutcome =
  | { stdout: string; stderr: string; exitCode: number | null }
  | { timedOut: true; ms: number };

async function run(
  bin: string,
  args: string[],
  options: DoctorOptions & { env: NodeJS.ProcessEnv },
): Promise<ProbeOutcome | null> {
  const started = Date.now();
  try {
    const result = await execa(bin, args, {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: options.probeTimeoutMs ?? 15_000,
    });
    if (result.timedOut) return { timedOut: true, ms: Date.now() - started };
    if (result.failed && result.exitCode === undefined) return null;
    return {
      stdout: String(result.stdout),
      stderr: String(result.stderr),
      exitCode: result.exitCode ?? null,
    };
  } catch {
    return null;
  }
}

/** Gemini's trustedFolders.json: the folder, or a parent marked TRUST_PARENT / TRUST_FOLDER. */
function trusted(cwd: string, env: NodeJS.ProcessEnv, home: string): boolean {
  if (env.GEMINI_CLI_TRUST_WORKSPACE === 'true') return true;
  const file = env.GEMINI_CLI_TRUSTED_FOLDERS_PATH ?? path.join(home, '.gemini', 'trustedFolders.json');
  const rules = readJson(file) ?? {};
  const dir = path.resolve(cwd);
  return Object.entries(rules).some(([folder, rule]) => {
    const f = path.resolve(folder);
    if (rule === 'TRUST_FOLDER') return dir === f || dir.startsWith(f + path.sep);
    if (rule === 'TRUST_PARENT') return dir.startsWith(path.dirname(f) + path.sep) || dir === path.dirname(f);
    return false;
  });
}

function readJson(file: string): Record<string, unknown> | undefined {
  try {
    return safeJson(readFileSync(file, 'utf8'));
  } catch {
    return undefined;
  }
}

function safeJson(text: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(text);
    return value && typeof value === 'object' ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
