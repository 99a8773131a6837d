import { statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  BUS_KINDS,
  BUS_PRIORITIES,
  type BusKind,
  type BusPriority,
  isBusKind,
  isBusPriority,
} from '../core/bus-vocabulary.js';
import { messageOf, NotFoundError, UsageError } from '../core/errors.js';
import { nestsDeeperThan } from '../core/nesting.js';
import type { Amqrc } from './amqrc.js';
import { nowNs, rfc3339Nano } from './clock.js';
import { type DeliveryReport, deliver, type Recipient } from './deliver.js';
import { listDlq, purgeDlq, readDlq, retryDlq } from './dlq.js';
import { HUMAN, isValidHandle, messageFilename, parseHandle } from './handle.js';
import { newMessageId } from './ids.js';
import {
  type DrainItem,
  type DrainOptions,
  drainMessages,
  findMessage,
  type ListOptions,
  listMessages,
  loadMessage,
  type MessageItem,
  mailNames,
  readOne,
  toItem,
} from './inbox.js';
import {
  initRoot,
  type Mailbox,
  mailbox,
  mailboxHandles,
  type RootConfig,
  readConfig,
  requireInitialized,
  sessionRoots,
} from './layout.js';
import { byCreated, formatMessage, type Header, MAX_HEADER_DEPTH, MAX_MESSAGE_BYTES } from './message.js';
import { isActive, type Presence, readPresence, setPresence, touchPresence } from './presence.js';
import { listReceipts, type ReceiptFilter, type Stage, waitForReceipt } from './receipts.js';
import { p2pThread, routedThread } from './threads.js';
import type { ValidateOptions } from './validate.js';
import { lockState, readWakeLock } from './wake-lock.js';
import { type WatchOptions, type WatchResult, watchDir } from './watch.js';

export interface BusOptions {
  /** The base root when `root` is a session (its parent); defaults to `root`. */
  baseRoot?: string;
  session?: string;
  /** The project `.amqrc` (project name and peers), for cross-project sends. */
  amqrc?: Amqrc;
  /** Refuse unknown handles and non-1 schemas instead of warning. */
  strict?: boolean;
}

export interface SendInput {
  from: string;
  /** Handles; `codex@project` or `codex@project:session` address a peer project. */
  to: string | string[];
  subject?: string;
  kind?: BusKind;
  priority?: BusPriority;
  labels?: string[];
  /** Required with more than one recipient; defaults to the p2p thread of the pair. */
  thread?: string;
  body: string;
  /** Where replies should go (`handle` or `handle@session`); stamped automatically on routed sends. */
  replyTo?: string;
  refs?: string[];
  context?: Record<string, unknown>;
  /** Destination session (a sibling of this root under the same base). */
  session?: string;
  /** Destination peer project (from `.amqrc` peers). */
  project?: string;
  allowSelf?: boolean;
  allowEmpty?: boolean;
  /**
   * A relay in no one's name (the swarm bridge's `swarm-bridge`): straight into the inboxes, with
   * no outbox copy and no presence, as AMQ's bridge delivers.
   */
  relay?: boolean;
}

export interface SendResult {
  id: string;
  thread: string;
  to: string[];
  subject: string;
  created: string;
  /** The root the message was delivered into. */
  root: string;
  source_root: string;
  session?: string;
  project?: string;
  cross_session: boolean;
  cross_project: boolean;
  delivered: string[];
  indeterminate: string[];
  outbox?: string;
  warnings: string[];
}

export interface ReplyInput {
  body: string;
  kind?: BusKind;
  priority?: BusPriority;
  subject?: string;
  labels?: string[];
  context?: Record<string, unknown>;
  allowEmpty?: boolean;
}

const REPLY_KIND: Partial<Record<string, BusKind>> = {
  review_request: 'review_response',
  question: 'answer',
};

export interface WhoEntry {
  session: string;
  root: string;
  handle: string;
  kind: 'agent' | 'human';
  status: string;
  last_seen: string;
  active: boolean;
  /** `notifier_live`: a running `troupe wake` holds its lock; `recent_activity`: seen in 10 min. */
  presence_source?: 'recent_activity' | 'notifier_live';
}

/**
 * The message bus over one AMQ root. Every method takes the acting handle explicitly, so one
 * process (the engine) can act for many agents. All file work is synchronous: a send is a few
 * syscalls and two fsyncs, and callers get a result they can rely on when the call returns.
 */
export class MessageBus {
  readonly root: string;
  readonly baseRoot: string;
  readonly session?: string;
  readonly amqrc?: Amqrc;
  readonly strict: boolean;
  /** meta/config.json per root, as last read (see unknownHandles). */
  private readonly configs = new Map<string, RootConfig>();

  constructor(root: string, options: BusOptions = {}) {
    this.root = resolve(root);
    this.baseRoot = resolve(options.baseRoot ?? root);
    if (options.session) this.session = options.session;
    if (options.amqrc) this.amqrc = options.amqrc;
    this.strict = options.strict === true;
  }

  mailbox(handle: string, root = this.root): Mailbox {
    return mailbox(root, handle);
  }

  config(): RootConfig | undefined {
    return readConfig(this.root) ?? (this.baseRoot !== this.root ? readConfig(this.baseRoot) : undefined);
  }

  private validation(): ValidateOptions {
    return this.strict ? { strict: true, agents: this.config()?.agents ?? [] } : {};
  }

  /**
   * Handles the root's meta/config.json does not list. The config is read once per root and read
   * again only when a handle is missing from it (another process may have added agents since).
   */
  private unknownHandles(root: string, handles: string[]): string[] {
    const missing = (config: RootConfig) => handles.filter((h) => h !== HUMAN && !config.agents.includes(h));
    const cached = this.configs.get(root);
    if (cached && missing(cached).length === 0) return [];
    const config = requireInitialized(root, this.baseRoot);
    this.configs.set(root, config);
    return missing(config);
  }

  init(agents: string[], force = false) {
    return initRoot(
      this.root,
      agents.map((a) => parseHandle(a, 'agent')),
      force,
    );
  }

  send(input: SendInput): SendResult {
    const from = parseHandle(input.from, 'sender');
    const warnings: string[] = [];
    const inline = parseRecipients(input.to);
    if (inline.handles.length === 0) throw new UsageError('--to is required');
    const to = inline.handles;
    const project = input.project ?? inline.project;
    const session = input.session ?? inline.session;
    if (input.kind && !isBusKind(input.kind)) {
      throw new UsageError(`invalid kind '${input.kind}' (one of ${BUS_KINDS.join(', ')})`);
    }
    if (input.priority && !isBusPriority(input.priority)) {
      throw new UsageError(`invalid priority '${input.priority}' (one of ${BUS_PRIORITIES.join(', ')})`);
    }
    if (!input.allowEmpty && !/\S/.test(input.body)) {
      throw new UsageError('empty message body', { hint: 'pass --allow-empty to send it anyway' });
    }
    if (to.length > 1 && !input.thread)
      throw new UsageError('--thread is required with more than one recipient');
    if (input.thread !== undefined && (input.thread === '' || input.thread.trim() !== input.thread)) {
      throw new UsageError(`invalid thread '${input.thread}'`);
    }

    const route = this.route(from, to, project, session);
    if (!route.crossSession && !route.crossProject && to.includes(from) && !input.allowSelf) {
      throw new UsageError(`refusing to send to yourself (${from}) without a session or project`, {
        hint: 'pass --allow-self if this is on purpose',
      });
    }
    if (!route.crossProject) {
      const unknown = this.unknownHandles(route.root, [from, ...to]);
      if (unknown.length > 0) {
        const text = `unknown handle(s): ${unknown.join(', ')} (not in meta/config.json)`;
        if (this.strict) throw new UsageError(text);
        warnings.push(text);
      }
    }

    const ns = nowNs();
    const id = newMessageId(ns);
    const header: Header = {
      schema: 1,
      id,
      from,
      to,
      thread: input.thread ?? route.thread,
      subject: input.subject,
      created: rfc3339Nano(ns),
      refs: input.refs,
      priority: input.priority || input.kind ? (input.priority ?? 'normal') : undefined,
      kind: input.kind,
      labels: input.labels,
      context: input.context,
      reply_to: input.replyTo ?? route.replyTo,
      reply_project: route.crossProject ? route.sourceProject : undefined,
      from_project: route.crossProject ? route.sourceProject : undefined,
    };
    // the header object is one level, `context` the next
    if (input.context && nestsDeeperThan(input.context, MAX_HEADER_DEPTH - 1)) {
      throw new UsageError(`context nests deeper than ${MAX_HEADER_DEPTH - 1} levels`);
    }
    const bytes = formatMessage(header, input.body);
    if (bytes.length > MAX_MESSAGE_BYTES) {
      throw new UsageError(
        `message is ${bytes.length} bytes; the limit is 10 MiB (${MAX_MESSAGE_BYTES} bytes)`,
      );
    }
    const recipients: Recipient[] = to.map((h) => ({
      box: mailbox(route.root, h),
      ...(route.crossProject ? { existingOnly: true } : {}),
    }));
    const source = input.relay ? undefined : this.mailbox(from);
    const report: DeliveryReport = deliver(recipients, `${id}.md`, bytes, source);
    if (report.outboxError) warnings.push(`outbox copy not written: ${report.outboxError}`);
    if (report.indeterminate.length > 0) {
      warnings.push(
        `delivered but durability indeterminate (fsync failed) for ${report.indeterminate.join(', ')}`,
      );
    }
    if (source) touchPresence(source);
    return {
      id,
      thread: header.thread,
      to,
      subject: input.subject ?? '',
      created: header.created,
      root: route.root,
      source_root: this.root,
      ...(route.session ? { session: route.session } : {}),
      ...(route.crossProject ? { project: project! } : {}),
      cross_session: route.crossSession,
      cross_project: route.crossProject,
      delivered: report.delivered,
      indeterminate: report.indeterminate,
      ...(report.outbox ? { outbox: report.outbox } : {}),
      warnings,
    };
  }

  /**
   * How a send would be routed now, without sending (`route explain`): the delivery root, the
   * thread it would open, and whether it crosses a session or a project. Throws as send would.
   */
  explainRoute(input: { from: string; to: string[]; project?: string; session?: string }) {
    const from = parseHandle(input.from, 'sender');
    const inline = parseRecipients(input.to);
    if (inline.handles.length === 0) throw new UsageError('--to is required');
    const route = this.route(
      from,
      inline.handles,
      input.project ?? inline.project,
      input.session ?? inline.session,
    );
    return { ...route, to: inline.handles, project: input.project ?? inline.project };
  }

  private route(from: string, to: string[], project?: string, session?: string) {
    const local = {
      root: this.root,
      thread: to.length === 1 ? p2pThread(from, to[0]!) : '',
      crossSession: false,
      crossProject: false,
      session: this.session,
      replyTo: undefined as string | undefined,
      sourceProject: undefined as string | undefined,
    };
    if (session !== undefined && !/^[a-z0-9_-]+$/.test(session))
      throw new UsageError(`invalid session '${session}'`);
    if (project !== undefined) {
      if (to.length !== 1) throw new UsageError('a cross-project send takes exactly one recipient');
      const rc = this.amqrc;
      if (!rc?.project) {
        throw new UsageError('cross-project send needs a project .amqrc with a "project" name', {
          hint: 'add {"root": ".agent-mail", "project": "<name>", "peers": {...}} to .amqrc',
        });
      }
      if (resolve(rc.root) !== this.baseRoot) {
        throw new UsageError(`${rc.file} root ${rc.root} is not this root or its base (${this.root})`);
      }
      const peer = rc.peers[project];
      if (!peer) throw new NotFoundError(`unknown peer project '${project}' (not in ${rc.file} peers)`);
      const dstSession = session ?? this.session;
      const root = dstSession ? join(peer, dstSession) : peer;
      return {
        ...local,
        root,
        thread: routedThread(
          { project: rc.project, ...(this.session ? { session: this.session } : {}), handle: from },
          { project, ...(dstSession ? { session: dstSession } : {}), handle: to[0]! },
        ),
        crossProject: true,
        session: dstSession,
        replyTo: this.session ? `${from}@${this.session}` : from,
        sourceProject: rc.project,
      };
    }
    if (session !== undefined && session !== this.session) {
      const root = join(this.baseRoot, session);
      if (!isDir(join(root, 'agents')))
        throw new NotFoundError(`unknown session '${session}' (no ${root}/agents)`);
      return {
        ...local,
        root,
        thread:
          to.length === 1
            ? routedThread(
                { ...(this.session ? { session: this.session } : {}), handle: from },
                { session, handle: to[0]! },
              )
            : '',
        crossSession: true,
        session,
        replyTo: this.session ? `${from}@${this.session}` : undefined,
      };
    }
    return local;
  }

  /** Replies on the original's thread, to whoever should get it (reply_project, reply_to, or from). */
  reply(me: string, id: string, input: ReplyInput): SendResult {
    me = parseHandle(me, 'handle');
    const found = findMessage(this.mailbox(me), id);
    if (!found) throw new NotFoundError(`no message '${id}' in ${me}'s inbox or outbox`);
    const orig = loadMessage(found.path, this.validation()).header;
    const routed = Boolean(orig.reply_project || orig.reply_to);
    if (orig.from === me && routed && found.where === 'sent') {
      throw new UsageError('refusing to reply to your own cross-session or cross-project message');
    }
    let to = orig.from === me ? (orig.to[0] ?? me) : orig.from;
    let project: string | undefined;
    let session: string | undefined;
    if (orig.reply_project) {
      project = orig.reply_project;
      [to, session] = splitReplyTo(orig.reply_to || orig.from);
    } else if (orig.reply_to) {
      [to, session] = splitReplyTo(orig.reply_to);
    }
    const subject = orig.subject ?? '';
    const kind = input.kind ?? (orig.kind ? (REPLY_KIND[orig.kind] ?? (orig.kind as BusKind)) : undefined);
    return this.send({
      from: me,
      to,
      thread: orig.thread,
      subject:
        input.subject ??
        (subject === '' ? 'Re: (no subject)' : /^re:/i.test(subject) ? subject : `Re: ${subject}`),
      body: input.body,
      refs: [...(orig.refs ?? []), orig.id],
      ...(kind ? { kind } : {}),
      ...(input.priority ? { priority: input.priority } : {}),
      ...(input.labels ? { labels: input.labels } : {}),
      ...(input.context ? { context: input.context } : {}),
      ...(project ? { project } : {}),
      ...(session ? { session } : {}),
      ...(input.allowEmpty ? { allowEmpty: true } : {}),
      allowSelf: true,
    });
  }

  drain(handle: string, options: DrainOptions = {}): DrainItem[] {
    const box = this.mailbox(parseHandle(handle));
    const items = drainMessages(box, options, this.validation());
    if (items.length > 0) touchPresence(box);
    return items;
  }

  list(handle: string, options: ListOptions = {}) {
    return listMessages(this.mailbox(parseHandle(handle)), options, this.validation());
  }

  read(handle: string, id: string) {
    return readOne(this.mailbox(parseHandle(handle)), id, this.validation());
  }

  /**
   * Every message on a thread, oldest first, from the inbox (new and cur) and outbox of each
   * agent (`agents`, else the configured ones plus `user`, else every mailbox). `limit` keeps the last N.
   */
  thread(
    threadId: string,
    options: { agents?: string[]; includeBody?: boolean; limit?: number } = {},
  ): MessageItem[] {
    const config = this.config();
    const agents = options.agents?.length
      ? options.agents.map((a) => parseHandle(a))
      : config
        ? [...config.agents, HUMAN]
        : mailboxHandles(this.root);
    const seen = new Map<string, MessageItem>();
    for (const handle of agents) {
      const box = this.mailbox(handle);
      for (const dir of [box.inboxNew, box.inboxCur, box.sent]) {
        for (const name of mailNames(dir)) {
          try {
            const m = loadMessage(join(dir, name));
            if (m.header.thread !== threadId || seen.has(m.header.id)) continue;
            seen.set(m.header.id, toItem(m.header, options.includeBody ? m.body : undefined));
          } catch {
            // unreadable or invalid: not part of any thread
          }
        }
      }
    }
    const items = [...seen.values()].sort(byCreated);
    return options.limit && options.limit > 0 ? items.slice(-options.limit) : items;
  }

  receipts(handle: string, filter: ReceiptFilter = {}) {
    return listReceipts(this.mailbox(parseHandle(handle)), filter);
  }

  /** Waits for `consumer`'s receipt of a message (in `root`, the delivery root of the send). */
  waitForReceipt(
    consumer: string,
    msgId: string,
    stage: Stage = 'drained',
    options: { timeoutMs?: number; pollMs?: number; signal?: AbortSignal; root?: string } = {},
  ) {
    return waitForReceipt(
      mailbox(options.root ?? this.root, parseHandle(consumer)),
      msgId,
      consumer,
      stage,
      options,
    );
  }

  dlqList(handle: string, which: 'new' | 'cur' | 'all' = 'all') {
    return listDlq(this.mailbox(parseHandle(handle)), which);
  }

  dlqRead(handle: string, id: string) {
    return readDlq(this.mailbox(parseHandle(handle)), id);
  }

  dlqRetry(handle: string, id: string, force = false) {
    return retryDlq(this.mailbox(parseHandle(handle)), id, force);
  }

  /** Retries every envelope not yet delivered; returns each outcome (errors included, not thrown). */
  dlqRetryAll(handle: string, force = false) {
    const box = this.mailbox(parseHandle(handle));
    return listDlq(box).entries.map((e) => {
      try {
        return retryDlq(box, e.envelope.id, force);
      } catch (error) {
        return {
          id: e.envelope.id,
          original_file: e.envelope.original_file,
          error: messageOf(error),
        };
      }
    });
  }

  dlqPurge(handle: string, options: { olderThanMs?: number; dryRun?: boolean } = {}) {
    return purgeDlq(this.mailbox(parseHandle(handle)), options);
  }

  setPresence(handle: string, status: string, note?: string): Presence {
    return setPresence(this.mailbox(parseHandle(handle)), status, note);
  }

  presence(): Presence[] {
    return mailboxHandles(this.root).flatMap((h) => {
      const p = readPresence(this.mailbox(h));
      return p ? [p] : [];
    });
  }

  /** Every agent with an inbox in the base root and each of its sessions. */
  who(): WhoEntry[] {
    const roots: Array<[string, string]> = [['', this.baseRoot], ...sessionRoots(this.baseRoot)];
    const now = Date.now();
    return roots.flatMap(([session, root]) =>
      mailboxHandles(root)
        .filter((h) => isDir(join(root, 'agents', h, 'inbox')))
        .map((handle): WhoEntry => {
          const box = mailbox(root, handle);
          const p = readPresence(box);
          const lock = readWakeLock(box);
          const notifier = lock !== undefined && lockState(lock) === 'running';
          const active = notifier || isActive(p, now);
          return {
            session,
            root,
            handle,
            kind: handle === HUMAN ? 'human' : 'agent',
            status: p?.status ?? '',
            last_seen: p?.last_seen ?? '',
            active,
            ...(notifier
              ? { presence_source: 'notifier_live' as const }
              : active
                ? { presence_source: 'recent_activity' as const }
                : {}),
          };
        }),
    );
  }

  /** Waits for mail in `handle`'s inbox without consuming it. */
  watch(handle: string, options: WatchOptions = {}): Promise<WatchResult> {
    const box = this.mailbox(parseHandle(handle));
    const validate = this.validation();
    return watchDir(box.inboxNew, () => listMessages(box, {}, validate), options);
  }
}

export function openBus(root: string, options: BusOptions = {}): MessageBus {
  return new MessageBus(root, options);
}

/** `codex`, `codex@project` or `codex@project:session`. */
export function parseRecipient(text: string): { handle: string; project?: string; session?: string } {
  const at = text.indexOf('@');
  if (at < 0) return { handle: parseHandle(text, 'recipient') };
  const handle = parseHandle(text.slice(0, at), 'recipient');
  const [project, session, extra] = text.slice(at + 1).split(':');
  if (!project || extra !== undefined || session === '') throw new UsageError(`invalid recipient '${text}'`);
  return { handle, project, ...(session ? { session } : {}) };
}

interface Recipients {
  handles: string[];
  project?: string;
  session?: string;
}

/**
 * `--to` as given (a list, each entry possibly comma-separated) to its distinct handles, in order,
 * and the first project and session any entry names.
 */
function parseRecipients(to: string | string[]): Recipients {
  const out: Recipients = { handles: [] };
  for (const entry of typeof to === 'string' ? [to] : to) {
    for (const part of entry.split(',')) {
      const text = part.trim();
      if (text === '') continue;
      const r = parseRecipient(text);
      if (!out.handles.includes(r.handle)) out.handles.push(r.handle);
      if (r.project && out.project === undefined) out.project = r.project;
      if (r.session && out.session === undefined) out.session = r.session;
    }
  }
  return out;
}

/** `handle@session` → [handle, session]; a bare handle has no session. */
function splitReplyTo(text: string): [string, string | undefined] {
  const [handle = '', session] = text.split('@');
  if (!isValidHandle(handle)) throw new UsageError(`cannot route a reply to '${text}'`);
  return [handle, session || undefined];
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

export { messageFilename };
