import { z } from 'zod';
import { BUS_KINDS, BUS_PRIORITIES } from '../../core/bus-vocabulary.js';
import { json, named, nonBlank, route } from './define.js';

/**
 * The project's message bus (docs/bus.md, docs/live.md) as the person `user` sees it: the roster,
 * an inbox, one message, send and reply. `?session=` picks a session of the base root; without
 * it, the root the bus commands find from the project directory.
 */

export const BusKind = named('BusKind', z.enum(BUS_KINDS));
export const BusPriority = named('BusPriority', z.enum(BUS_PRIORITIES));

const handle = z.string().regex(/^[a-z0-9_][a-z0-9_-]*$/, 'must be a handle: a-z, 0-9, _ and -');
const session = z.object({
  session: z
    .string()
    .regex(/^[a-z0-9_-]+$/, 'must be a session name')
    .optional(),
});

export const RosterEntry = named(
  'RosterEntry',
  z.strictObject({
    handle: z.string(),
    kind: z.enum(['agent', 'human']),
    presence: z
      .enum(['active', 'idle', 'offline'])
      .describe('active: its wake runs or it was seen in 10 minutes; idle: its status is idle or away'),
    status: z.string().describe('what it set with `bus presence set`, or `active` from a send or drain'),
    note: z.string().optional(),
    last_seen: z.string().optional(),
    wake: z
      .enum(['running', 'stale', 'unverified'])
      .optional()
      .describe('its `troupe wake` lock: running, stale (owner gone), unverified (another host)'),
    backlog: z.strictObject({ new: z.int(), cur: z.int() }).describe('unread and read messages in its inbox'),
  }),
);

export const Roster = named(
  'Roster',
  z.strictObject({
    root: z.string(),
    session: z.string().nullable().describe('the session shown; null: the root is not a session'),
    sessions: z.array(z.string()).describe("the base root's sessions"),
    agents: z.array(RosterEntry),
  }),
);

export const BusMessage = named(
  'BusMessage',
  z.strictObject({
    id: z.string(),
    from: z.string(),
    to: z.array(z.string()),
    thread: z.string(),
    subject: z.string(),
    created: z.string(),
    priority: z.string().describe("empty when the sender set none (the bus's `normal`)"),
    kind: z.string(),
    read: z.boolean().describe('false: still in inbox/new'),
  }),
);

export const BusInbox = named(
  'BusInbox',
  z.strictObject({
    handle: z.string(),
    session: z.string().nullable(),
    messages: z.array(BusMessage).describe('unread first, then newest first'),
    warnings: z.array(z.string()).describe('files skipped: unreadable or invalid'),
  }),
);

export const BusMessageDetail = named(
  'BusMessageDetail',
  BusMessage.extend({
    body: z.string(),
    refs: z.array(z.string()),
    labels: z.array(z.string()),
    reply_to: z.string().optional(),
  }),
);

export const BusSent = named(
  'BusSent',
  z.strictObject({
    id: z.string(),
    thread: z.string(),
    to: z.array(z.string()),
    subject: z.string(),
    created: z.string(),
    delivered: z.array(z.string()),
    warnings: z.array(z.string()),
  }),
);

const message = z.object({ handle, id: z.string().regex(/^[^/\\.][^/\\]*$/, 'must be a message id') });

export const busApi = {
  roster: route({
    method: 'get',
    path: '/api/bus/roster',
    summary: 'every mailbox of the bus (or a session): presence, wake, backlog',
    query: session,
    responses: { 200: json('the roster', Roster) },
    errors: [400, 404],
  }),
  inbox: route({
    method: 'get',
    path: '/api/bus/mailboxes/:handle/inbox',
    summary: "a mailbox's inbox, headers only: unread first; moves nothing",
    params: z.object({ handle }),
    query: session,
    responses: { 200: json('the inbox', BusInbox) },
    errors: [400, 404],
  }),
  message: route({
    method: 'get',
    path: '/api/bus/mailboxes/:handle/inbox/:id',
    summary: "one message with its body; `user`'s is marked read (as `bus read`), an agent's only shown",
    params: message,
    query: session,
    responses: { 200: json('the message', BusMessageDetail) },
    errors: [400, 404, 422],
  }),
  send: route({
    method: 'post',
    path: '/api/bus/send',
    summary: 'a message from `user` to one or more handles',
    query: session,
    body: z.object({
      to: z.array(handle).min(1),
      subject: z.string().default(''),
      body: nonBlank,
      priority: BusPriority.optional(),
      kind: BusKind.optional(),
      thread: z.string().optional().describe('required with more than one recipient'),
    }),
    responses: { 201: json('sent', BusSent) },
    errors: [400, 404, 422],
  }),
  reply: route({
    method: 'post',
    path: '/api/bus/reply',
    summary: "`user`'s reply to a message of its inbox, on the message's thread",
    query: session,
    body: z.object({
      id: z.string(),
      body: nonBlank,
      priority: BusPriority.optional(),
      kind: BusKind.optional(),
    }),
    responses: { 201: json('sent', BusSent) },
    errors: [400, 404, 422],
  }),
};
