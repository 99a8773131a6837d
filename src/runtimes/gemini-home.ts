import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile, symlink, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { messageOf } from '../core/errors.js';

/**
 * Gemini 0.61 reads a system settings or system defaults file only when the file and every
 * folder above it belong to root and no one else may write them (`isFileAndDirectorySecureSync`);
 * otherwise it prints a "Security Warning: Skipping …" and goes on without it. For an ordinary
 * user the only settings it reads from a path troupe chooses are the user's own,
 * `$GEMINI_CLI_HOME/.gemini/settings.json`. So a run that needs settings gets a home of its own:
 * its `.gemini` links to every entry of the user's (credentials, sessions and history,
 * trusted folders, extensions, GEMINI.md), and its settings.json is the user's with troupe's
 * MCP servers and model aliases added. A workspace `.gemini/settings.json` would work too, but
 * it would be written into the user's project (and committed in a task's worktree).
 */

type Json = Record<string, unknown>;

export interface GeminiRunHome {
  /** The value for GEMINI_CLI_HOME. */
  home: string;
  /** What could not be honoured, for a warning. */
  warnings: string[];
}

/**
 * Where Gemini keeps the user's settings: `$GEMINI_CLI_HOME`, else the home folder; `env` is what
 * the CLI is given on top of this process's environment (a HOME there is the CLI's home).
 */
export function userGeminiHome(env: Record<string, string | undefined>): string {
  return env.GEMINI_CLI_HOME || env.HOME || process.env.GEMINI_CLI_HOME || os.homedir();
}

/**
 * Makes `<dir>/home` for one run. `tmp` and `history` are made in the user's `.gemini` first
 * when missing (Gemini makes them on its first run anyway), so that sessions written through
 * the links outlive the run and `--resume` finds them.
 */
export async function makeGeminiRunHome(dir: string, userHome: string, ours: Json): Promise<GeminiRunHome> {
  const userDir = path.join(userHome, '.gemini');
  const home = path.join(dir, 'home');
  const runDir = path.join(home, '.gemini');
  await mkdir(runDir, { recursive: true, mode: 0o700 });
  await Promise.all(
    ['tmp', 'history'].map((d) => mkdir(path.join(userDir, d), { recursive: true }).catch(() => undefined)),
  );
  const entries = await readdir(userDir).catch(() => [] as string[]);
  await Promise.all(
    entries
      .filter((name) => name !== 'settings.json')
      .map((name) => symlink(path.join(userDir, name), path.join(runDir, name))),
  );
  // what Gemini reads beside .gemini in its home
  for (const name of ['.env', '.agents']) {
    if (existsSync(path.join(userHome, name)))
      await symlink(path.join(userHome, name), path.join(home, name));
  }
  const { settings: user, warning } = await readUserSettings(userHome);
  const warnings = warning ? [warning] : [];
  await writeFile(path.join(runDir, 'settings.json'), JSON.stringify(mergeSettings(user, ours)), {
    mode: 0o600,
  });
  return { home, warnings };
}

/** The user's `$home/.gemini/settings.json` (`{}` when there is none), or why it could not be read. */
export async function readUserSettings(userHome: string): Promise<{ settings: Json; warning?: string }> {
  const file = path.join(userHome, '.gemini', 'settings.json');
  if (!existsSync(file)) return { settings: {} };
  try {
    const parsed: unknown = JSON.parse(stripJsonComments(await readFile(file, 'utf8')));
    if (parsed && typeof parsed === 'object' && !Array.isArray(parsed)) return { settings: parsed as Json };
    throw new Error('not a JSON object');
  } catch (error) {
    return {
      settings: {},
      warning: `${file} could not be read (${messageOf(error)}): gemini runs with troupe's settings only`,
    };
  }
}

/** Whether the user's own settings name MCP servers (which a task must not start unasked). */
export async function userHasMcpServers(userHome: string): Promise<boolean> {
  return Object.keys(asJson((await readUserSettings(userHome)).settings.mcpServers)).length > 0;
}

/**
 * The user's settings with troupe's model aliases added (troupe's win a name), and only the
 * agent's MCP servers: the user's own would start in every task (--allowed-mcp-server-names
 * hides their tools, but Gemini still starts them).
 */
export function mergeSettings(user: Json, ours: Json): Json {
  const merged: Json = { ...user };
  if (ours.mcpServers) merged.mcpServers = asJson(ours.mcpServers);
  const aliases = asJson(asJson(ours.modelConfigs).customAliases);
  if (Object.keys(aliases).length > 0) {
    const userModels = asJson(user.modelConfigs);
    merged.modelConfigs = {
      ...userModels,
      customAliases: { ...asJson(userModels.customAliases), ...aliases },
    };
  }
  return merged;
}

function asJson(value: unknown): Json {
  return value && typeof value === 'object' && !Array.isArray(value) ? (value as Json) : {};
}

/** Gemini's settings may hold line and block comments (it reads them with strip-json-comments). */
export function stripJsonComments(text: string): string {
  let out = '';
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (c === '"') {
      const start = i++;
      while (i < text.length && text[i] !== '"') i += text[i] === '\\' ? 2 : 1;
      out += text.slice(start, ++i);
    } else if (c === '/' && text[i + 1] === '/') {
      while (i < text.length && text[i] !== '\n') i++;
    } else if (c === '/' && text[i + 1] === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 2;
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
