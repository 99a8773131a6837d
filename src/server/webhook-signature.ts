import { createHmac, timingSafeEqual } from 'node:crypto';

/** The trackers whose webhooks `serve` takes, and where each one's secret is set. */
export const WEBHOOK_SECRET_ENV = {
  github: 'TROUPE_GITHUB_WEBHOOK_SECRET',
  linear: 'TROUPE_LINEAR_WEBHOOK_SECRET',
} as const;

export type WebhookSender = keyof typeof WEBHOOK_SECRET_ENV;
export type WebhookSecrets = Partial<Record<WebhookSender, string>>;

/** Linear's advice: a delivery whose `webhookTimestamp` is further than this from now is a replay. */
export const LINEAR_MAX_SKEW_MS = 60_000;

/** The secrets set in the environment (an empty one is none). */
export function webhookSecrets(env: NodeJS.ProcessEnv): WebhookSecrets {
  const secrets: WebhookSecrets = {};
  for (const [sender, name] of Object.entries(WEBHOOK_SECRET_ENV)) {
    const value = env[name]?.trim();
    if (value) secrets[sender as WebhookSender] = value;
  }
  return secrets;
}

/**
 * Whether `body` was signed by the holder of `secret`: null if so, else why not (one line, for
 * the 401). GitHub: `X-Hub-Signature-256: sha256=<hex>`; Linear: `Linear-Signature: <hex>` and a
 * `webhookTimestamp` (ms) in the body within a minute of `now`, so a captured delivery cannot be
 * replayed later.
 */
export function signatureProblem(
  sender: WebhookSender,
  body: Uint8Array,
  header: (name: string) => string | undefined,
  secret: string,
  now: number,
): string | null {
  const name = sender === 'github' ? 'X-Hub-Signature-256' : 'Linear-Signature';
  const given = header(name)?.trim() ?? '';
  const hex = (sender === 'github' ? /^sha256=([0-9a-f]{64})$/i : /^([0-9a-f]{64})$/i).exec(given)?.[1];
  if (!hex) return `${name} is missing or malformed`;
  const expected = createHmac('sha256', secret).update(body).digest();
  if (!timingSafeEqual(Buffer.from(hex, 'hex'), expected)) return `${name} does not match the body`;
  if (sender === 'linear') {
    const stamp = webhookTimestamp(body);
    if (stamp === null || Math.abs(now - stamp) > LINEAR_MAX_SKEW_MS)
      return 'webhookTimestamp is missing or not within a minute of now (a replay?)';
  }
  return null;
}

/** The signed body's `webhookTimestamp`, read only after its signature matched. */
function webhookTimestamp(body: Uint8Array): number | null {
  try {
    const value = (JSON.parse(Buffer.from(body).toString('utf8')) as { webhookTimestamp?: unknown })
      ?.webhookTimestamp;
    return typeof value === 'number' && Number.isFinite(value) ? value : null;
  } catch {
    return null;
  }
}
