import { createHmac } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { defaultConfig } from '../../pipeline/config.js';
import { openSqliteStore } from '../../store/sqlite/sqlite-store.js';
import { createApp } from '../app.js';
import { MAX_BODY_BYTES } from '../body-limit.js';
import type { WebhookOptions } from './trackers.js';

/** The tracker webhooks in process, on a server that has a token (which they do not need). */

const SECRET = 'webhook-secret-for-tests';
const TOKEN = 'a-token-of-at-least-sixteen-characters';

function server(webhooks: WebhookOptions) {
  const root = mkdtempSync(path.join(tmpdir(), 'troupe-webhooks-'));
  const troupe = createApp({
    project: { root, store: openSqliteStore(path.join(root, 'troupe.db')), config: defaultConfig() },
    token: TOKEN,
    webhooks,
  });
  return (sender: string, body: string, headers: Record<string, string> = {}) =>
    troupe.app.request(`/api/trackers/webhook/${sender}`, {
      method: 'POST',
      headers: { Host: 'troupe.example.org', 'Content-Type': 'application/json', ...headers },
      body,
    });
}

const githubSignature = (body: string, secret = SECRET) => ({
  'X-Hub-Signature-256': `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`,
});

describe('tracker webhooks', () => {
  it('a signed delivery wakes the watch without the token; one signed with another secret does not', async () => {
    let wakes = 0;
    const post = server({ secrets: { github: SECRET }, wake: () => wakes++ });
    const body = '{"zen":"Keep it logically awesome."}';
    expect((await post('github', body, githubSignature(body))).status).toBe(202);
    const forged = await post('github', body, githubSignature(body, 'another-secret'));
    expect(forged.status).toBe(401);
    expect(await forged.json()).toEqual({
      error: { code: 'unauthorized', message: 'X-Hub-Signature-256 does not match the body' },
    });
    expect((await post('github', body, { 'X-Hub-Signature-256': 'sha256=zz' })).status).toBe(401);
    expect(wakes).toBe(1);
  });

  it('a sender without a secret, or a server that watches nothing, is 404 saying what to set', async () => {
    let wakes = 0;
    const post = server({ secrets: { github: SECRET }, wake: () => wakes++ });
    const body = JSON.stringify({ webhookTimestamp: Date.now() });
    const off = await post('linear', body, { 'Linear-Signature': 'a'.repeat(64) });
    expect(off.status).toBe(404);
    expect(((await off.json()) as { error: { message: string } }).error.message).toMatch(
      /TROUPE_LINEAR_WEBHOOK_SECRET/,
    );
    const unwatched = server({ secrets: { github: SECRET }, wake: null });
    const none = await unwatched('github', body, githubSignature(body));
    expect(none.status).toBe(404);
    expect(((await none.json()) as { error: { message: string } }).error.message).toMatch(/serve --watch/);
    expect(wakes).toBe(0);
  });

  it('a body over the limit is refused before it is read (413)', async () => {
    let wakes = 0;
    const post = server({ secrets: { github: SECRET }, wake: () => wakes++ });
    const body = `"${'x'.repeat(MAX_BODY_BYTES)}"`;
    expect((await post('github', body, githubSignature(body))).status).toBe(413);
    expect(wakes).toBe(0);
  });
});
