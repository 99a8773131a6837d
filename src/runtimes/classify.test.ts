import { describe, expect, it } from 'vitest';
import { classifyMessage } from './classify.js';
import { parseClaudeReset, parseCodexReset, parseDuration, parseGeminiReset } from './reset-time.js';

const NOW = new Date('2026-11-29T10:02:30Z');

describe('classifyMessage', () => {
  it.each([
    ["You've hit your session limit · resets 11:32am (UTC)", 'usage_limit'],
    ["You've hit your weekly limit · resets Dec 2, 11am (UTC)", 'usage_limit'],
    ["You've hit your Opus limit · resets 3pm", 'usage_limit'],
    ["You've hit your limit · resets 11pm (America/Anchorage)", 'usage_limit'],
    ['Claude AI usage limit reached|1750708800', 'usage_limit'],
    ['Claude usage limit reached. Your limit will reset at 5pm (Europe/Warsaw).', 'usage_limit'],
    ['5-hour limit reached ∙ resets 3pm', 'usage_limit'],
    ['Weekly limit reached ∙ resets Nov 13 at 9am', 'usage_limit'],
    ['You’ve hit your usage limit. Try again later.', 'usage_limit'],
    [
      "You've hit your usage limit for gpt-5.5. Switch to another model now, or try again at 3:00 PM.",
      'usage_limit',
    ],
    ['You have exhausted your daily quota on this model.', 'usage_limit'],
    ['You have exhausted your capacity on this model. Your quota will reset after 8h44m7s.', 'usage_limit'],
    [
      'API Error: Server is temporarily limiting requests (not your usage limit) · Rate limited',
      'rate_limited',
    ],
    [
      'API Error: Request rejected (429) · Number of request tokens has exceeded your per-minute rate limit',
      'rate_limited',
    ],
    ['exceeded retry limit, last status: 429 Too Many Requests', 'rate_limited'],
    ['Quota exceeded. Check your plan and billing details.', 'quota_billing'],
    ['Credit balance is too low', 'quota_billing'],
    ['Not logged in · Please run /login', 'auth'],
    ['Invalid API key · Fix external API key', 'auth'],
    ['unexpected status 401 Unauthorized: Incorrect API key provided', 'auth'],
    ['API Error: 529 Overloaded. This is a server-side issue', 'overloaded'],
    ['API Error: Unable to connect to API (ConnectionRefused)', 'network'],
    ['Reconnecting... waiting for network (Connection failed: error sending request)', 'network'],
    ['[API Error: exception TypeError: fetch failed sending request]', 'network'],
    ['Prompt is too long', 'context_overflow'],
    ['Not inside a trusted directory and --skip-git-repo-check was not specified.', 'untrusted_directory'],
    ['No conversation found with session ID: 0000', 'session_not_found'],
    ['Error resuming session: No previous sessions found for this project.', 'session_not_found'],
    ['Error resuming session: Invalid session identifier "0000".', 'session_not_found'],
    ['something else entirely', undefined],
  ])('%s → %s', (text, kind) => {
    expect(classifyMessage(text)).toBe(kind);
  });
});

// Google's 429 bodies (the Gemini API, also behind its OpenAI-compatible endpoint), as the
// API returns them: each says "You exceeded your current quota", whatever the quota was
const GOOGLE_QUOTA =
  'You exceeded your current quota, please check your plan and billing details. For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits.';
const googleBody = (message: string, quotaId: string, retryDelay?: string) =>
  JSON.stringify({
    error: {
      code: 429,
      message,
      status: 'RESOURCE_EXHAUSTED',
      details: [
        {
          '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
          violations: [
            {
              quotaMetric: 'generativelanguage.googleapis.com/generate_content_free_tier_requests',
              quotaId,
            },
          ],
        },
        ...(retryDelay ? [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay }] : []),
      ],
    },
  });

describe("Google's 'You exceeded your current quota'", () => {
  it('is a rate limit when the body gives a retry delay (a per-minute quota)', () => {
    const body = googleBody(
      `${GOOGLE_QUOTA}\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 10, model: gemini-2.5-flash\nPlease retry in 43.463264s.`,
      'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
      '43s',
    );
    expect(classifyMessage(body)).toBe('rate_limited');
    expect(parseGeminiReset(body, NOW)?.toISOString()).toBe('2026-11-29T10:03:13.000Z');
    // what Gemini CLI says after its own retries: the same message, inside its result
    expect(
      classifyMessage(
        `[API Error: ${GOOGLE_QUOTA} Please retry in 43.4s.]\nPlease wait and try again later.`,
      ),
    ).toBe('rate_limited');
  });

  it("is a usage limit when the quota is the day's", () => {
    const body = googleBody(
      `${GOOGLE_QUOTA}\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 250`,
      'GenerateRequestsPerDayPerProjectPerModel-FreeTier',
      '20h10m3s',
    );
    expect(classifyMessage(body)).toBe('usage_limit');
  });

  it('is billing when the plan has no quota for the model (limit: 0), or nothing says more', () => {
    const body = googleBody(
      `${GOOGLE_QUOTA}\n* Quota exceeded for metric: generativelanguage.googleapis.com/generate_content_free_tier_requests, limit: 0, model: gemini-2.5-pro\nPlease retry in 20s.`,
      'GenerateRequestsPerMinutePerProjectPerModel-FreeTier',
      '20s',
    );
    expect(classifyMessage(body)).toBe('quota_billing');
    // OpenAI's insufficient_quota says the same words
    expect(
      classifyMessage('You exceeded your current quota, please check your plan and billing details.'),
    ).toBe('quota_billing');
  });
});

describe('reset times', () => {
  it.each([
    ['resets 12:02pm (UTC)', '2026-11-29T12:02:00.000Z'],
    ['resets 9am (UTC)', '2026-11-30T09:00:00.000Z'],
    ['resets Dec 2, 12:02pm (UTC)', '2026-12-02T12:02:00.000Z'],
    ['resets Jul 27 at 4:30am (Asia/Calcutta)', '2027-07-26T23:00:00.000Z'],
    ['resets Jul 31, 2am (UTC)', '2027-07-31T02:00:00.000Z'],
    ['resets 11pm (America/Anchorage)', '2026-11-30T08:00:00.000Z'],
    ['Your limit will reset at 5pm (Europe/Warsaw).', '2026-11-29T16:00:00.000Z'],
    ['Claude AI usage limit reached|1750708800', '2025-06-23T20:00:00.000Z'],
  ])('claude: %s', (text, iso) => {
    expect(parseClaudeReset(text, NOW)?.toISOString()).toBe(iso);
  });

  it('codex: same day, tomorrow, and with a date', () => {
    expect(parseCodexReset('or try again at 1:13 PM.', NOW)?.toISOString()).toBe('2026-11-29T13:13:00.000Z');
    expect(parseCodexReset('try again at 9:00 AM.', NOW)?.toISOString()).toBe('2026-11-30T09:00:00.000Z');
    expect(parseCodexReset('try again at Dec 2nd, 2026 10:03 AM.', NOW)?.toISOString()).toBe(
      '2026-12-02T10:03:00.000Z',
    );
    expect(parseCodexReset('Try again later.', NOW)).toBeUndefined();
  });

  it('gemini: the timestamp first, else the delay from now', () => {
    expect(parseGeminiReset('quotaResetTimeStamp: "2026-04-28T09:06:26Z"', NOW)?.toISOString()).toBe(
      '2026-04-28T09:06:26.000Z',
    );
    expect(parseGeminiReset('Your quota will reset after 8h44m7s.', NOW)?.toISOString()).toBe(
      '2026-11-29T18:46:37.000Z',
    );
    expect(parseGeminiReset('Suggested retry after 1s.', NOW)?.toISOString()).toBe(
      '2026-11-29T10:02:31.000Z',
    );
    expect(parseDuration('6m0s')).toBe(360_000);
    expect(parseDuration('20ms')).toBe(20);
  });
});
