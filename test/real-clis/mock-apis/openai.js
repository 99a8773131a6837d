// OpenAI Responses API, as Codex speaks it (`openai_base_url`, CODEX_API_KEY as the Bearer
// key): a WebSocket `GET /v1/responses` first (refused here, so it falls back), then
// `POST /v1/responses` streamed as SSE: response.created, response.output_item.added,
// response.output_text.delta, response.output_item.done, response.completed (with usage).
// Input items are messages (`input_text`), `function_call` / `custom_tool_call` and their
// `*_output`; a `tool_search_call` / `tool_search_output` pair finds deferred (MCP) tools, which
// the model then calls as a `function_call` with their `namespace`. A limit is a 429
// `usage_limit_reached` with `resets_in_seconds` / `resets_at`.
import { json, sse, startSse, usageOf } from './common.js';

export const openai = {
  route(method, path) {
    if (method === 'POST' && /\/responses$/.test(path)) return 'model';
    return 'other';
  },
  other(_route, _req, res) {
    json(res, 404, { error: { message: 'not mocked', type: 'invalid_request_error' } });
  },
  messages(body) {
    const out = [];
    for (const item of body?.input ?? []) {
      if (item.type === 'message') {
        const text = (item.content ?? []).map((c) => c.text ?? '').join('\n');
        out.push({ role: item.role === 'assistant' ? 'assistant' : item.role, kind: 'text', text });
      } else if (item.type === 'function_call' || item.type === 'custom_tool_call') {
        out.push({ role: 'assistant', kind: 'tool_call', text: JSON.stringify(item) });
      } else if (item.type === 'tool_search_call') {
        out.push({ role: 'assistant', kind: 'tool_call', text: JSON.stringify(item) });
      } else if (item.type === 'tool_search_output') {
        out.push({
          role: 'user',
          kind: 'tool_result',
          text: JSON.stringify(item.tools ?? []),
          isError: false,
        });
      } else if (item.type === 'function_call_output' || item.type === 'custom_tool_call_output') {
        const output = typeof item.output === 'string' ? item.output : JSON.stringify(item.output);
        out.push({ role: 'user', kind: 'tool_result', text: output, isError: false });
      }
    }
    return out;
  },
  fail(res, kind) {
    if (kind === 'auth')
      return json(res, 401, {
        error: {
          message: 'Incorrect API key provided: sk-fake***e2e.',
          type: 'invalid_request_error',
          code: 'invalid_api_key',
        },
      });
    json(res, 500, {
      error: { message: 'The server had an error while processing your request.', type: 'server_error' },
    });
  },
  limit(res, { resetAfterS }) {
    json(res, 429, {
      error: {
        type: 'usage_limit_reached',
        message: 'The usage limit has been reached',
        plan_type: 'plus',
        resets_at: Math.ceil(Date.now() / 1000 + resetAfterS),
        resets_in_seconds: resetAfterS,
      },
    });
  },
  turn(res, turn, { body, id }) {
    const usage = usageOf(turn);
    const responseId = `resp_mock_${id}`;
    const item = turn.tool?.search
      ? {
          // Codex's client-side tool search: how the model finds deferred (MCP) tools
          type: 'tool_search_call',
          id: `ts_mock_${id}`,
          call_id: `call_mock_${id}`,
          execution: 'client',
          arguments: { query: turn.tool.search },
          status: 'completed',
        }
      : turn.tool?.freeform
        ? {
            // a freeform tool (Codex's apply_patch): its input is the raw text
            type: 'custom_tool_call',
            id: `ctc_mock_${id}`,
            call_id: `call_mock_${id}`,
            name: turn.tool.name,
            input: turn.tool.freeform,
            status: 'completed',
          }
        : turn.tool
          ? {
              type: 'function_call',
              id: `fc_mock_${id}`,
              call_id: `call_mock_${id}`,
              name: turn.tool.name,
              ...(turn.tool.namespace ? { namespace: turn.tool.namespace } : {}),
              arguments: JSON.stringify(turn.tool.input ?? {}),
              status: 'completed',
            }
          : {
              type: 'message',
              id: `msg_mock_${id}`,
              role: 'assistant',
              status: 'completed',
              content: [{ type: 'output_text', text: turn.text ?? '', annotations: [] }],
            };
    const base = { id: responseId, object: 'response', model: body?.model ?? 'gpt-mock', output: [] };
    startSse(res);
    sse(res, { type: 'response.created', response: { ...base, status: 'in_progress' } }, 'response.created');
    sse(
      res,
      { type: 'response.output_item.added', output_index: 0, item: { ...item, status: 'in_progress' } },
      'response.output_item.added',
    );
    if (!turn.tool) {
      sse(
        res,
        {
          type: 'response.output_text.delta',
          item_id: item.id,
          output_index: 0,
          content_index: 0,
          delta: turn.text ?? '',
        },
        'response.output_text.delta',
      );
    }
    sse(res, { type: 'response.output_item.done', output_index: 0, item }, 'response.output_item.done');
    sse(
      res,
      {
        type: 'response.completed',
        response: {
          ...base,
          status: 'completed',
          output: [item],
          usage: {
            input_tokens: usage.input,
            input_tokens_details: { cached_tokens: 0 },
            output_tokens: usage.output,
            output_tokens_details: { reasoning_tokens: 0 },
            total_tokens: usage.input + usage.output,
          },
        },
      },
      'response.completed',
    );
    res.end();
  },
};
