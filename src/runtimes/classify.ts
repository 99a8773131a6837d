import type { RuntimeErrorKind } from '../core/runtime.js';
import { isRuntimeName, RUNTIMES, type RuntimeFacts } from '../core/runtimes.js';

/**
 * The error wordings the CLIs and endpoints print, old and new, mapped to troupe's kinds. The
 * order matters: a usage limit also says "limit", a 401 retried also says "Reconnecting".
 * Sources: ../shared/reference/aoa-and-clis.md B4 and the captures.
 */
const PATTERNS: ReadonlyArray<[RuntimeErrorKind, RegExp]> = [
  [
    'session_not_found',
    /No conversation found with session ID|no rollout found for thread id|No session found|Error resuming session: (?:No previous sessions found|Invalid session identifier)/i,
  ],
  ['untrusted_directory', /not running in a trusted directory|Not inside a trusted directory/i],
  ['permission_denied', /cannot be used with root\/sudo privileges/i],
  ['rate_limited', /temporarily limiting requests \(not your usage limit\)/i],
  [
    'usage_limit',
    /You[’']ve hit your\b[^.·∙\n]*?\blimit|usage limit reached|limit reached\s*[∙·]\s*resets|You have exhausted your (?:daily quota|capacity)|QUOTA_EXHAUSTED/i,
  ],
  [
    'quota_billing',
    /Quota exceeded\. Check your plan|insufficient_quota|Credit balance is too low|billing_error|INSUFFICIENT_G1_CREDITS_BALANCE|exceeded your current quota|payment required/i,
  ],
  [
    'auth',
    /Not logged in|Invalid API key|authentication_failed|API key not valid|API_KEY_INVALID|\b401 Unauthorized|Incorrect API key|Please set an Auth method|invalid x-api-key|OAuth token (?:has )?expired|UNAUTHENTICATED|invalid_api_key|Invalid auth method/i,
  ],
  [
    'context_overflow',
    /prompt is too long|context window|context_length_exceeded|maximum context length|input is too long|exceeds the context|token limit exceeded|too many tokens/i,
  ],
  [
    'rate_limited',
    /rate.?limit|Too Many Requests|\b429\b|Resource has been exhausted|RESOURCE_EXHAUSTED|RetryableQuotaError/i,
  ],
  [
    'overloaded',
    /\b529\b|Overloaded|MODEL_CAPACITY_EXHAUSTED|No capacity available|server_is_overloaded|Service Unavailable|\b50[0234]\b|Internal Server Error|server_error/i,
  ],
  [
    'network',
    /Unable to connect|ConnectionRefused|ECONNREFUSED|ENOTFOUND|ETIMEDOUT|ECONNRESET|EAI_AGAIN|fetch failed|waiting for network|Name does not resolve|error sending request|stream disconnected|socket hang up|network is unreachable/i,
  ],
];

/** The kind a message stands for, or undefined when it is none of the known wordings. */
export function classifyMessage(text: string): RuntimeErrorKind | undefined {
  for (const [kind, pattern] of PATTERNS) {
    if (pattern.test(text)) return kind === 'quota_billing' ? exceededQuotaKind(text) : kind;
  }
  return undefined;
}

/**
 * "You exceeded your current quota" is OpenAI's wording for a spent balance, and Google's for
 * every quota: a per-minute limit (a `RetryInfo.retryDelay`, "Please retry in 43s"), a day's
 * (a `…PerDay…` quota id), or none on the plan (`limit: 0`, a model the tier does not get).
 */
function exceededQuotaKind(text: string): RuntimeErrorKind {
  if (!/exceeded your current quota/i.test(text) || /\blimit: 0\b/.test(text)) return 'quota_billing';
  if (/PerDay|per day/i.test(text)) return 'usage_limit';
  if (/retryDelay|RetryInfo|Please retry in|Suggested retry after/i.test(text)) return 'rate_limited';
  return 'quota_billing';
}

/** What to do about each kind, said once for every runtime. */
export function hintFor(kind: RuntimeErrorKind, runtime: string): string | undefined {
  const facts: RuntimeFacts | undefined = isRuntimeName(runtime) ? RUNTIMES[runtime] : undefined;
  switch (kind) {
    case 'auth':
      return facts?.authHint ?? RUNTIMES.openai.authHint;
    case 'untrusted_directory':
      return (facts?.kind === 'cli' && facts.untrustedHint) || 'run inside a git repository';
    case 'usage_limit':
      return 'troupe waits for the reset time and runs the stage again (`troupe resume` after it)';
    case 'quota_billing':
      return 'add credit or change the plan of this account';
    case 'permission_denied':
      return 'as root, `permissions: full` needs IS_SANDBOX=1 in the environment; or use `permissions: edit`';
    case 'budget':
      return 'raise `budget.usd` in the pipeline to let the task spend more';
    case 'session_not_found':
      return 'the CLI no longer has that conversation: run the stage again without resume';
    default:
      return undefined;
  }
}
