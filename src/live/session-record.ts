import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { errno, writeFileAtomic } from '../bus/durable.js';
import { goJson } from '../bus/go-json.js';
import { HUMAN } from '../bus/handle.js';
import { ensureMailbox, mailbox, sessionRoots } from '../bus/layout.js';
import { messageOf, UsageError } from '../core/errors.js';
import { findCodexConversation } from './conversation-id.js';
import type { Adapter } from './launch-config.js';
import { isValidSession } from './launch-config.js';

/**
 * troupe's record of a session's launches, in the extension namespace AMQ reserves for other
 * layers (`<session root>/extensions/troupe/session.json`; AMQ never writes or cleans there):
 * each agent's exact conversation id, so a relaunch resumes that conversation and no other.
 */
export interface AgentRecord {
  adapter: Adapter;
  /** The CLI's own conversation id; null until known (codex tells it only in its session files). */
  conversation_id: string | null;
  /** A token in the agent's first prompt, to find a codex conversation by (see conversation-id.ts). */
  nonce: string;
  launched: string;
  launches: number;
  /** Where it runs: a tmux pane and the server it belongs to (`#{pid}`), to tell a live one from a reused id. */
  pane?: string;
  tmux_server_pid?: string;
  tmux_socket?: string;
}

export interface SessionRecord {
  schema: 1;
  session: string;
  agents: Record<string, AgentRecord>;
}

export function sessionRecordPath(sessionRoot: string): string {
  return join(sessionRoot, 'extensions', 'troupe', 'session.json');
}

export function readSessionRecord(sessionRoot: string, session: string): SessionRecord {
  const file = sessionRecordPath(sessionRoot);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    if (errno(error) === 'ENOENT') return { schema: 1, session, agents: {} };
    throw error;
  }
  try {
    const raw = JSON.parse(text) as SessionRecord;
    if (!raw || typeof raw.agents !== 'object' || raw.agents === null) throw new Error('no "agents" object');
    return { schema: 1, session, agents: raw.agents };
  } catch (error) {
    throw new UsageError(`${file}: ${messageOf(error)}`, {
      hint: 'fix it, or remove it to start every agent in a new conversation',
    });
  }
}

export function writeSessionRecord(sessionRoot: string, record: SessionRecord): void {
  const dir = join(sessionRoot, 'extensions', 'troupe');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  writeFileAtomic(dir, 'session.json', Buffer.from(`${goJson(record)}\n`));
}

/**
 * `session create`: a direct child of the base root that is a full queue root (AMQ's layout:
 * `agents/`, `threads/`, `meta/`, no config of its own, so it inherits the base's roster), with a
 * mailbox for each agent and for the person. Idempotent.
 */
export function createSession(baseRoot: string, session: string, handles: string[]): string {
  if (!isValidSession(session)) throw new UsageError(`invalid session name '${session}': use [a-z0-9_-]+`);
  if (['agents', 'threads', 'meta', 'extensions', 'bridge'].includes(session))
    throw new UsageError(`'${session}' is a folder of the root itself, not a session name`);
  const root = join(baseRoot, session);
  for (const dir of ['agents', 'threads', 'meta'])
    mkdirSync(join(root, dir), { recursive: true, mode: 0o700 });
  for (const handle of [...handles, HUMAN]) ensureMailbox(mailbox(root, handle), true);
  return root;
}

export interface SessionSummary {
  session: string;
  root: string;
  agents: Array<{ handle: string; adapter: Adapter; conversation_id: string | null; launches: number }>;
}

export function listSessions(baseRoot: string): SessionSummary[] {
  return sessionRoots(baseRoot).map(([session, root]) => {
    let record: SessionRecord;
    try {
      record = readSessionRecord(root, session);
    } catch {
      record = { schema: 1, session, agents: {} };
    }
    return {
      session,
      root,
      agents: Object.entries(record.agents).map(([handle, a]) => ({
        handle,
        adapter: a.adapter,
        conversation_id: knownConversation(a),
        launches: a.launches,
      })),
    };
  });
}

/**
 * The agent's conversation: the recorded id, or for codex the one its session files hold for the
 * nonce of its last launch (looked up when asked: codex writes it only once it has started).
 */
export function knownConversation(a: AgentRecord, env: NodeJS.ProcessEnv = process.env): string | null {
  if (a.conversation_id) return a.conversation_id;
  if (a.adapter !== 'codex' || !a.nonce) return null;
  const since = Date.parse(a.launched) - 60_000;
  return findCodexConversation(a.nonce, Number.isNaN(since) ? 0 : since, env);
}
