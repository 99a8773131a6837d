import { join } from 'node:path';
import { Hono } from 'hono';
import { type MessageBus, openBus, type SendResult } from '../../bus/bus.js';
import { HUMAN } from '../../bus/handle.js';
import { findMessage, loadMessage, type MessageItem } from '../../bus/inbox.js';
import { mailboxHandles, sessionRoots } from '../../bus/layout.js';
import { projectBusRoot } from '../../bus/root.js';
import { roster } from '../../bus/roster.js';
import { NotFoundError } from '../../core/errors.js';
import { busApi } from '../api/bus.js';
import type { ServerContext } from '../context.js';
import { handle } from '../handle.js';

interface Opened {
  bus: MessageBus;
  session: string | null;
  sessions: string[];
}

/**
 * The bus as the person `user` uses it from the dashboard. The root is found as the bus commands
 * find it from the project, at each request (a `bus setup` after the server started counts).
 */
export function busRoutes(ctx: ServerContext): Hono {
  const app = new Hono();

  const open = (session?: string): Opened => {
    const resolved = projectBusRoot(ctx.root);
    const sessions = sessionRoots(resolved.baseRoot).map(([name]) => name);
    if (session !== undefined && !sessions.includes(session)) {
      throw new NotFoundError(`no session '${session}' in ${resolved.baseRoot}`);
    }
    const root = session === undefined ? resolved.root : join(resolved.baseRoot, session);
    const name = session ?? resolved.session ?? null;
    const bus = openBus(root, {
      baseRoot: resolved.baseRoot,
      ...(name ? { session: name } : {}),
      ...(resolved.amqrc ? { amqrc: resolved.amqrc } : {}),
    });
    return { bus, session: name, sessions };
  };
  /** A handle with a mailbox in this root; anything else is a 404. */
  const known = (bus: MessageBus, handles: string[]): void => {
    const boxes = mailboxHandles(bus.root);
    const unknown = handles.filter((h) => !boxes.includes(h));
    if (unknown.length > 0) throw new NotFoundError(`no mailbox for ${unknown.join(', ')} in ${bus.root}`);
  };

  handle(app, busApi.roster, ({ query, reply }) => {
    const { bus, session, sessions } = open(query.session);
    return reply(200, { root: bus.root, session, sessions, agents: roster(bus.root) });
  });

  handle(app, busApi.inbox, ({ params, query, reply }) => {
    const { bus, session } = open(query.session);
    known(bus, [params.handle]);
    const unread = bus.list(params.handle, { box: 'new' });
    const read = bus.list(params.handle, { box: 'cur' });
    const newestFirst = (items: MessageItem[], isRead: boolean) =>
      items.reverse().map((item) => header(item, isRead));
    return reply(200, {
      handle: params.handle,
      session,
      messages: [...newestFirst(unread.items, false), ...newestFirst(read.items, true)],
      warnings: [...unread.warnings, ...read.warnings],
    });
  });

  handle(app, busApi.message, ({ params, query, reply }) => {
    const { bus } = open(query.session);
    known(bus, [params.handle]);
    if (params.handle === HUMAN) {
      const { header: h, body } = bus.read(HUMAN, params.id);
      return reply(200, detail({ ...h, subject: h.subject ?? '' }, body, true));
    }
    // an agent's mail is only shown: reading it here would take it from the agent
    const found = findMessage(bus.mailbox(params.handle), params.id);
    if (!found || found.where === 'sent') {
      throw new NotFoundError(`no message '${params.id}' in ${params.handle}'s inbox`);
    }
    const { header: h, body } = loadMessage(found.path);
    return reply(200, detail({ ...h, subject: h.subject ?? '' }, body, found.where === 'cur'));
  });

  handle(app, busApi.send, ({ query, body, reply }) => {
    const { bus } = open(query.session);
    known(bus, [HUMAN, ...body.to]);
    const sent = bus.send({
      from: HUMAN,
      to: body.to,
      subject: body.subject,
      body: body.body,
      ...(body.priority ? { priority: body.priority } : {}),
      ...(body.kind ? { kind: body.kind } : {}),
      ...(body.thread ? { thread: body.thread } : {}),
    });
    return reply(201, sentJson(sent));
  });

  handle(app, busApi.reply, ({ query, body, reply }) => {
    const { bus } = open(query.session);
    known(bus, [HUMAN]);
    const sent = bus.reply(HUMAN, body.id, {
      body: body.body,
      ...(body.priority ? { priority: body.priority } : {}),
      ...(body.kind ? { kind: body.kind } : {}),
    });
    return reply(201, sentJson(sent));
  });

  return app;
}

type Listed = Pick<MessageItem, 'id' | 'from' | 'to' | 'thread' | 'subject' | 'created'> & {
  priority?: string;
  kind?: string;
};

function header(m: Listed, read: boolean) {
  return {
    id: m.id,
    from: m.from,
    to: m.to,
    thread: m.thread,
    subject: m.subject,
    created: m.created,
    priority: m.priority ?? '',
    kind: m.kind ?? '',
    read,
  };
}

function detail(
  h: Listed & { refs?: string[]; labels?: string[]; reply_to?: string },
  body: string,
  read: boolean,
) {
  return {
    ...header(h, read),
    body,
    refs: h.refs ?? [],
    labels: h.labels ?? [],
    ...(h.reply_to ? { reply_to: h.reply_to } : {}),
  };
}

function sentJson(sent: SendResult) {
  return {
    id: sent.id,
    thread: sent.thread,
    to: sent.to,
    subject: sent.subject,
    created: sent.created,
    delivered: sent.delivered,
    warnings: sent.warnings,
  };
}
