import { type Context, Hono } from 'hono';
import { trackerApi } from '../api/trackers.js';
import { limitBodies } from '../body-limit.js';
import {
  signatureProblem,
  WEBHOOK_SECRET_ENV,
  type WebhookSecrets,
  type WebhookSender,
} from '../webhook-signature.js';

/** What the webhooks need: the secrets, and the running watch loop's "poll now" (null: no `--watch`). */
export interface WebhookOptions {
  secrets: WebhookSecrets;
  wake: (() => void) | null;
}

/**
 * The tracker webhooks. Served ahead of the token check (app.ts): the sender's signature is what
 * lets a delivery in. A signed delivery only asks for a poll, which reads the tracker itself.
 */
export function trackerWebhookRoutes(options: WebhookOptions): Hono {
  const app = new Hono();
  const senders: Array<[WebhookSender, typeof trackerApi.githubWebhook]> = [
    ['github', trackerApi.githubWebhook],
    ['linear', trackerApi.linearWebhook],
  ];
  for (const [sender, declared] of senders) {
    app.post(declared.path, limitBodies(), async (c) => {
      const secret = options.secrets[sender];
      if (!options.wake)
        return refused(c, 404, 'not_found', 'this server watches no tracker (serve --watch)');
      if (!secret)
        return refused(
          c,
          404,
          'not_found',
          `${sender} webhooks are off: set ${WEBHOOK_SECRET_ENV[sender]} where serve runs`,
        );
      const body = new Uint8Array(await c.req.arrayBuffer());
      const problem = signatureProblem(sender, body, (name) => c.req.header(name), secret, Date.now());
      if (problem) return refused(c, 401, 'unauthorized', problem);
      options.wake();
      return c.json({ poll: 'soon' as const }, 202);
    });
  }
  return app;
}

function refused(c: Context, status: 401 | 404, code: string, message: string): Response {
  return c.json({ error: { code, message } }, status);
}
