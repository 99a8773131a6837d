import { z } from 'zod';
import { json, named, type Route, route } from './define.js';

/**
 * Tracker webhooks (docs/trackers.md, "Webhooks"): a signed delivery makes `serve --watch` poll
 * now. They take no token (GitHub and Linear cannot send one): the sender's signature over the
 * raw body is checked instead, and the body is never read for more than "something changed".
 */

export const WebhookAccepted = named(
  'WebhookAccepted',
  z.strictObject({
    poll: z
      .literal('soon')
      .describe('the watch loop polls the tracker within a moment (a burst is one poll)'),
  }),
);

function webhook(sender: string, signature: string): Route {
  return route({
    method: 'post',
    path: `/api/trackers/webhook/${sender.toLowerCase()}`,
    summary: `${sender}'s webhook: signed with ${signature} (HMAC-SHA256 of the raw body); no token`,
    responses: { 202: json('the poll is asked for', WebhookAccepted) },
    errors: [401, 404, 413],
  });
}

export const trackerApi = {
  githubWebhook: webhook('GitHub', '`X-Hub-Signature-256: sha256=<hex>`'),
  linearWebhook: webhook('Linear', '`Linear-Signature: <hex>`, its `webhookTimestamp` within 60 s'),
};
