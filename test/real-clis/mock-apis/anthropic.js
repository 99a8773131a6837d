// Anthropic Messages API, as Claude Code speaks it: `HEAD /` (a reachability probe),
// `POST /v1/messages?beta=true` streamed as SSE (message_start, content_block_start/delta/stop,
// message_delta with the stop reason and usage, message_stop), `count_tokens`.
// A limit is a 429 `rate_limit_error` with `retry-after` and the unified rate-limit headers
// (`anthropic-ratelimit-unified-status: rejected`, `-reset: <epoch s>`).
import { json, sse, startSse, usageOf } from './common.js';

export const anthropic = {
  route(method, path) {
    if (method === 'POST' && /\/v1\/messages$/.test(path)) return 'model';
    if (method === 'POST' && /count_tokens$/.test(path)) return 'count';
    return 'other';
  },
  other(route, _req, res) {
    if (route === 'count') return json(res, 200, { input_tokens: 100 });
    res.writeHead(200);
    res.end();
  },
  /** Claude's own side calls (the session title) offer no tools. */
  side: (body) => !Array.isArray(body?.tools) || body.tools.length === 0,
  /** The working directory Claude Code names in its system prompt. */
  cwd: (body) => {
    const system = Array.isArray(body?.system)
      ? body.system.map((b) => b.text ?? '').join('\n')
      : String(body?.system ?? '');
    return /Primary working directory: (\S+)/.exec(system)?.[1] ?? null;
  },
  messages(body) {
    const out = [];
    for (const m of body?.messages ?? []) {
      const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : (m.content ?? []);
      const texts = blocks.filter((b) => b.type === 'text').map((b) => b.text);
      if (texts.length) out.push({ role: m.role, kind: 'text', text: texts.join('\n') });
      for (const b of blocks) {
        if (b.type === 'tool_use') out.push({ role: m.role, kind: 'tool_call', text: JSON.stringify(b) });
        if (b.type === 'tool_result') {
          const content = typeof b.content === 'string' ? b.content : JSON.stringify(b.content);
          out.push({ role: m.role, kind: 'tool_result', text: content, isError: b.is_error === true });
        }
      }
    }
    return out;
  },
  fail(res, kind) {
    if (kind === 'auth')
      return json(res, 401, {
        type: 'error',
        error: { type: 'authentication_error', message: 'invalid x-api-key' },
      });
    json(res, 500, { type: 'error', error: { type: 'api_error', message: 'Internal server error' } });
  },
  limit(res, { resetAfterS }) {
    const reset = Math.ceil(Date.now() / 1000 + resetAfterS);
    json(
      res,
      429,
      {
        type: 'error',
        error: { type: 'rate_limit_error', message: 'This request would exceed your rate limit.' },
      },
      {
        'retry-after': String(resetAfterS),
        'anthropic-ratelimit-unified-status': 'rejected',
        'anthropic-ratelimit-unified-reset': String(reset),
        'anthropic-ratelimit-unified-representative-claim': 'five_hour',
      },
    );
  },
  turn(res, turn, { body, id }) {
    const usage = usageOf(turn);
    const model = body?.model ?? 'claude-mock';
    const messageId = `msg_mock_${id}`;
    const block = turn.tool
      ? { type: 'tool_use', id: `toolu_mock_${id}`, name: turn.tool.name, input: turn.tool.input }
      : { type: 'text', text: turn.text ?? '' };
    const stop = turn.tool ? 'tool_use' : 'end_turn';
    if (body?.stream !== true) {
      return json(res, 200, {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model,
        content: [block],
        stop_reason: stop,
        stop_sequence: null,
        usage: { input_tokens: usage.input, output_tokens: usage.output },
      });
    }
    startSse(res);
    sse(
      res,
      {
        type: 'message_start',
        message: {
          id: messageId,
          type: 'message',
          role: 'assistant',
          model,
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: {
            input_tokens: usage.input,
            output_tokens: 1,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
          },
        },
      },
      'message_start',
    );
    if (turn.tool) {
      sse(
        res,
        { type: 'content_block_start', index: 0, content_block: { ...block, input: {} } },
        'content_block_start',
      );
      sse(
        res,
        {
          type: 'content_block_delta',
          index: 0,
          delta: { type: 'input_json_delta', partial_json: JSON.stringify(turn.tool.input) },
        },
        'content_block_delta',
      );
    } else {
      sse(
        res,
        { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
        'content_block_start',
      );
      sse(
        res,
        { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: turn.text ?? '' } },
        'content_block_delta',
      );
    }
    sse(res, { type: 'content_block_stop', index: 0 }, 'content_block_stop');
    sse(
      res,
      {
        type: 'message_delta',
        delta: { stop_reason: stop, stop_sequence: null },
        usage: { output_tokens: usage.output },
      },
      'message_delta',
    );
    sse(res, { type: 'message_stop' }, 'message_stop');
    res.end();
  },
};
