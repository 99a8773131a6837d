import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execa } from 'execa';
import type { Pipeline } from '../core/pipeline.js';
import { isOnPath } from '../pipeline/on-path.js';
import { CLAUDE_INSTALL } from './claude.js';
import { CODEX_INSTALL } from './codex.js';
import { GEMINI_INSTALL } from './gemini.js';
import { mcpLaunch } from './mcp.js';

/**
 * What `troupe doctor` looks at: each CLI (installed? which version? can it run headless here?),
 * the MCP commands a pipeline starts, and the key variables of its openai agents. The probes
 * spend no tokens: they read the CLI's own login status and the environment, never a prompt.
 */

export type CliName = 'claude' | 'gemini' | 'codex';
export type Readiness = 'ok' | 'missing_cli' | 'auth' | 'untrusted_directory' | 'unknown';

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

export interface DoctorReport {
  clis: CliCheck[];
  mcp: McpCheck[];
  keys: KeyCheck[];
  /** Every runtime the pipeline uses is ready, and its MCP commands and keys are there. */
  ok: boolean;
}

export interface DoctorOptions {
  cwd: string;
  env?: NodeJS.ProcessEnv;
  pipeline?: Pipeline | null;
  trustWorkspace?: boolean;
  bins?: Partial<Record<CliName, string>>;
  home?: string;
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
  const names: CliName[] = ['claude', 'gemini', 'codex'];
  const clis = await Promise.all(
    names.map(async (runtime) => {
      const check = await checkCli(
        runtime,
        options.bins?.[runtime] ?? env[`TROUPE_${runtime.toUpperCase()}_BIN`] ?? runtime,
        {
          ...options,
          env,
        },
      );
      return { ...check, used: used.has(runtime) };
    }),
  );
  const mcp: McpCheck[] = [];
  const keys: KeyCheck[] = [];
  for (const agent of options.pipeline?.agents ?? []) {
    if (agent.type !== 'agent') continue;
    for (const server of agent.mcp.map(mcpLaunch)) {
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
      const variable = agent.openai?.api_key_env ?? 'OPENAI_API_KEY';
      const set = Boolean(env[variable]);
      // a local server (Ollama, vLLM) needs no key unless the pipeline names one
      if (!set && !agent.openai?.api_key_env && agent.openai?.base_url) continue;
      keys.push({ agent: agent.id, variable, set, fix: set ? null : `export ${variable}=…` });
    }
  }
  const ok =
    clis.every((c) => !c.used || c.status === 'ok') && mcp.every((m) => m.found) && keys.every((k) => k.set);
  return { clis, mcp, keys, ok };
}

async function checkCli(
  runtime: CliName,
  bin: string,
  options: DoctorOptions & { env: NodeJS.ProcessEnv },
): Promise<Omit<CliCheck, 'used'>> {
  const base = { runtime, bin };
  const version = await run(bin, ['--version'], options);
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
      if (env.OPENAI_API_KEY || env.CODEX_API_KEY) {
        return { ...found, status: 'ok', detail: 'API key in the environment', fix: null };
      }
      const status = await run(bin, ['login', 'status'], options);
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
        fix: 'run `codex login`, or set OPENAI_API_KEY',
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

async function run(bin: string, args: string[], options: DoctorOptions & { env: NodeJS.ProcessEnv }) {
  try {
    const result = await execa(bin, args, {
      cwd: options.cwd,
      env: options.env,
      extendEnv: false,
      stdin: 'ignore',
      reject: false,
      timeout: 15_000,
    });
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
