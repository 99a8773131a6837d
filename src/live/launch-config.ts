import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errno } from '../bus/durable.js';
import { isValidHandle } from '../bus/handle.js';
import { messageOf, UsageError } from '../core/errors.js';
import { LIVE_RUNTIMES, type LiveRuntime } from '../core/runtimes.js';

/** The agent CLIs troupe can launch, each with how it takes a standing instruction and a resume (agent-command.ts). */
export const ADAPTERS = LIVE_RUNTIMES;
export type Adapter = LiveRuntime;

export type ResumePolicy = 'resume' | 'fresh' | 'disabled';

export interface LaunchAgent {
  handle: string;
  adapter: Adapter;
  /** The CLI and its committed arguments, e.g. ["claude", "--permission-mode", "acceptEdits"]. */
  command: string[];
  resume_policy: ResumePolicy;
}

/** AMQ's `.amq/launch.json` (schema 1): the committed roster of a project. */
export interface LaunchConfig {
  schema: 1;
  default_session: string;
  agents: LaunchAgent[];
  layout: { type: string };
}

export const LAUNCH_FILE = join('.amq', 'launch.json');

/** Session names as AMQ takes them: `[a-z0-9_-]+`. */
export function isValidSession(name: string): boolean {
  return /^[a-z0-9_-]+$/.test(name);
}

export function isAdapter(name: string): name is Adapter {
  return (ADAPTERS as readonly string[]).includes(name);
}

/** The project's launch config, or undefined when it has none; a broken one is a usage error. */
export function readLaunchConfig(projectDir: string): LaunchConfig | undefined {
  const file = join(projectDir, LAUNCH_FILE);
  const raw = readJsonFile(file);
  return raw === undefined ? undefined : checkLaunchConfig(raw, file);
}

/** A JSON file of `.amq/`, parsed; undefined when there is none; bad JSON is a usage error naming it. */
export function readJsonFile(file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return undefined;
    throw error;
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new UsageError(`${file}: invalid JSON: ${messageOf(error)}`);
  }
}

function checkLaunchConfig(raw: unknown, file: string): LaunchConfig {
  const bad = (what: string) => new UsageError(`${file}: ${what}`);
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw bad('expected a JSON object');
  const c = raw as Record<string, unknown>;
  if (c.schema !== 1) throw bad('"schema" must be 1');
  if (typeof c.default_session !== 'string' || !isValidSession(c.default_session))
    throw bad('"default_session" must be a session name ([a-z0-9_-]+)');
  if (!Array.isArray(c.agents)) throw bad('"agents" must be an array');
  const seen = new Set<string>();
  const agents = c.agents.map((a, i): LaunchAgent => {
    const at = `agents[${i}]`;
    if (!a || typeof a !== 'object') throw bad(`${at} must be an object`);
    const { handle, adapter, command, resume_policy } = a as Record<string, unknown>;
    if (typeof handle !== 'string' || !isValidHandle(handle) || handle === 'user')
      throw bad(`${at}.handle must be an agent handle ([a-z0-9_-]+, not user)`);
    if (seen.has(handle)) throw bad(`${at}.handle "${handle}" appears twice`);
    seen.add(handle);
    if (typeof adapter !== 'string' || !isAdapter(adapter))
      throw bad(`${at}.adapter must be one of ${ADAPTERS.join(', ')}`);
    if (
      !Array.isArray(command) ||
      command.length === 0 ||
      !command.every((w) => typeof w === 'string' && w !== '')
    )
      throw bad(`${at}.command must be a non-empty array of strings`);
    const policy = resume_policy ?? 'resume';
    if (policy !== 'resume' && policy !== 'fresh' && policy !== 'disabled')
      throw bad(`${at}.resume_policy must be resume, fresh or disabled`);
    return { handle, adapter, command: command as string[], resume_policy: policy };
  });
  const layout = c.layout as { type?: unknown } | undefined;
  return {
    schema: 1,
    default_session: c.default_session,
    agents,
    layout: { type: typeof layout?.type === 'string' ? layout.type : 'columns' },
  };
}
