// The shared part of the mock vendor APIs: a loopback HTTP server that records every request
// and answers the model turns of a script.
//
// A script is `{ [name]: Turn[] }`. A request belongs to the script whose marker `[[script:NAME]]`
// is in the last user text message that carries one (side calls the CLIs make by themselves
// carry none and get `fallbackTurn`); its step is the number of tool results after that
// message, so the mock keeps no conversation state and `--resume` works unchanged.
//
// Turn: { text } | { tool: { name, input } } (exactly one tool call), plus optional
// `usage: { input, output }` and `limit: { resetAfterS }`: the first request that reaches a
// limited turn gets the vendor's 429 with its reset, the next ones the turn itself. `fail: { kind,
// times }`: the first `times` requests (every one, without `times`) that reach the turn fail:
// `auth` the vendor's answer to a bad key, `server` its 500, `drop` a connection closed unanswered.
import http from 'node:http';

export const MARKER = /\[\[script:([\w.-]+)\]\]/;

/**
 * Starts one mock. `vendor` turns a request into { messages: [{ role, kind, text }] } (kind:
 * 'text' | 'tool_call' | 'tool_result') and answers turns; see anthropic.js, gemini.js, openai.js.
 */
export async function startMock(vendor, script, options = {}) {
  const requests = [];
  const limited = new Set();
  const failures = new Map();
  const fallbackTurn = options.fallbackTurn ?? { text: 'ok' };
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body = null;
      try {
        body = raw ? JSON.parse(raw) : null;
      } catch {
        body = raw;
      }
      const url = new URL(req.url ?? '/', 'http://127.0.0.1');
      const entry = {
        at: Date.now(),
        method: req.method,
        path: url.pathname,
        query: url.search,
        headers: req.headers,
        body,
      };
      requests.push(entry);
      const route = vendor.route(req.method, url.pathname);
      entry.route = route;
      if (route !== 'model') {
        vendor.other(route, req, res, body);
        return;
      }
      const messages = vendor.messages(body);
      entry.messages = messages;
      // a side call (Claude's session title, …) is answered but never takes a scripted turn
      const { name, step } = vendor.side?.(body) ? { name: null, step: 0 } : locate(messages);
      entry.script = name;
      entry.step = step;
      const turns = name ? script[name] : undefined;
      const turn = turns ? turns[Math.min(step, turns.length - 1)] : fallbackTurn;
      const key = `${name}#${step}`;
      const failed = failures.get(key) ?? 0;
      if (turn?.fail && (turn.fail.times === undefined || failed < turn.fail.times)) {
        failures.set(key, failed + 1);
        entry.answered = turn.fail.kind;
        if (turn.fail.kind === 'drop') req.socket.destroy();
        else vendor.fail(res, turn.fail.kind);
        return;
      }
      if (turn?.limit && !limited.has(key)) {
        limited.add(key);
        entry.answered = 'limit';
        vendor.limit(res, turn.limit, { url, body });
        return;
      }
      entry.answered = turn?.tool ? 'tool' : 'text';
      let answer = turn ?? fallbackTurn;
      // a tool input may depend on the request (Claude's Write wants an absolute path)
      if (typeof answer.tool?.input === 'function') {
        answer = {
          ...answer,
          tool: { ...answer.tool, input: answer.tool.input({ cwd: vendor.cwd?.(body) ?? null }) },
        };
      }
      vendor.turn(res, answer, { url, body, id: requests.length });
    });
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = server.address().port;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    requests,
    /** The model requests of one script, in order. */
    of: (name) => requests.filter((r) => r.script === name),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}

function locate(messages) {
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i];
    if (m.role !== 'user' || m.kind !== 'text') continue;
    const found = MARKER.exec(m.text);
    if (!found) continue;
    const step = messages.slice(i + 1).filter((x) => x.kind === 'tool_result').length;
    return { name: found[1], step };
  }
  return { name: null, step: 0 };
}

/** Writes one server-sent event (`event:` only when named). */
export function sse(res, data, event) {
  res.write(`${event ? `event: ${event}\n` : ''}data: ${JSON.stringify(data)}\n\n`);
}

export function json(res, status, body, headers = {}) {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

export function startSse(res) {
  res.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
}

export const usageOf = (turn) => ({ input: turn.usage?.input ?? 100, output: turn.usage?.output ?? 20 });
