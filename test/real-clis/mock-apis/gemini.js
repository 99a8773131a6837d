// Gemini API, as Gemini CLI speaks it (GOOGLE_GEMINI_BASE_URL, GEMINI_API_KEY):
// `POST /v1beta/models/<model>:streamGenerateContent?alt=sse` (SSE, one
// GenerateContentResponse per `data:`), `:generateContent` (one JSON response; the CLI's own
// side calls) and `:countTokens`. Contents are `{role: user|model, parts: [{text} |
// {functionCall} | {functionResponse}]}`. A limit is a 429 RESOURCE_EXHAUSTED whose message
// says "limit: 0" and "Please retry in Ns", with a `RetryInfo` detail.
import { json, sse, startSse, usageOf } from './common.js';

// one answer for every JSON check Gemini CLI makes by itself: the model router's classifier
// and the next-speaker check
const SIDE_ANSWER = JSON.stringify({
  reasoning: 'the turn is done',
  next_speaker: 'user',
  complexity_reasoning: 'a small task',
  complexity_score: 1,
});

export const gemini = {
  route(method, path) {
    if (method === 'POST' && /:streamGenerateContent$/.test(path)) return 'model';
    if (method === 'POST' && /:generateContent$/.test(path)) return 'side';
    if (method === 'POST' && /:countTokens$/.test(path)) return 'count';
    return 'other';
  },
  other(route, _req, res) {
    if (route === 'count') return json(res, 200, { totalTokens: 100 });
    if (route === 'side') {
      // next-speaker and similar checks ask for JSON; "model" ends the turn
      return json(res, 200, {
        candidates: [
          {
            content: { role: 'model', parts: [{ text: SIDE_ANSWER }] },
            finishReason: 'STOP',
            index: 0,
          },
        ],
        usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
      });
    }
    json(res, 404, { error: { code: 404, message: 'not mocked', status: 'NOT_FOUND' } });
  },
  messages(body) {
    const out = [];
    for (const c of body?.contents ?? []) {
      const role = c.role === 'model' ? 'assistant' : 'user';
      const parts = c.parts ?? [];
      const texts = parts.filter((p) => typeof p.text === 'string' && !p.thought).map((p) => p.text);
      if (texts.length) out.push({ role, kind: 'text', text: texts.join('\n') });
      for (const p of parts) {
        if (p.functionCall) out.push({ role, kind: 'tool_call', text: JSON.stringify(p.functionCall) });
        if (p.functionResponse) {
          const response = p.functionResponse.response ?? {};
          out.push({
            role,
            kind: 'tool_result',
            text: JSON.stringify(response),
            isError: 'error' in response,
          });
        }
      }
    }
    return out;
  },
  /** Google answers a bad key with a 400 API_KEY_INVALID, not a 401. */
  fail(res, kind) {
    if (kind === 'auth')
      return json(res, 400, {
        error: {
          code: 400,
          message: 'API key not valid. Please pass a valid API key.',
          status: 'INVALID_ARGUMENT',
          details: [
            {
              '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
              reason: 'API_KEY_INVALID',
              domain: 'googleapis.com',
            },
          ],
        },
      });
    json(res, 500, { error: { code: 500, message: 'Internal error encountered.', status: 'INTERNAL' } });
  },
  limit(res, { resetAfterS }) {
    json(res, 429, {
      error: {
        code: 429,
        // "limit: 0" makes Gemini CLI give up at once (TerminalQuotaError) instead of retrying
        message: `Resource has been exhausted (e.g. check quota). Quota exceeded for metric: generate_content_requests, limit: 0. Please retry in ${resetAfterS}s.`,
        status: 'RESOURCE_EXHAUSTED',
        details: [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${resetAfterS}s` }],
      },
    });
  },
  turn(res, turn, { url }) {
    const usage = usageOf(turn);
    const model = /models\/([^:]+):/.exec(url.pathname)?.[1] ?? 'gemini-mock';
    const part = turn.tool
      ? { functionCall: { name: turn.tool.name, args: turn.tool.input } }
      : { text: turn.text ?? '' };
    startSse(res);
    sse(res, {
      candidates: [{ content: { role: 'model', parts: [part] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: {
        promptTokenCount: usage.input,
        candidatesTokenCount: usage.output,
        totalTokenCount: usage.input + usage.output,
      },
      modelVersion: model,
    });
    res.end();
  },
};
