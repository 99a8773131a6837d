#!/usr/bin/env node
// A stdio MCP server with one tool, `probe_tool`, whose answer carries a word the model cannot
// guess (so a test can see that the tool's result reached the model). Newline-delimited
// JSON-RPC 2.0. Every request is appended to $MCP_PROBE_LOG when it is set.
import { appendFileSync } from 'node:fs';
import { createInterface } from 'node:readline';

export const PROBE_WORD = 'TANGERINE-42';
const log = process.env.MCP_PROBE_LOG;
const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);

createInterface({ input: process.stdin }).on('line', (line) => {
  let request;
  try {
    request = JSON.parse(line);
  } catch {
    return;
  }
  if (log) appendFileSync(log, `${JSON.stringify({ method: request.method, params: request.params })}\n`);
  if (request.id === undefined || request.id === null) return; // a notification
  switch (request.method) {
    case 'initialize':
      return send({
        id: request.id,
        result: {
          protocolVersion: request.params?.protocolVersion ?? '2025-06-18',
          capabilities: { tools: {} },
          serverInfo: { name: 'probe', version: '1.0.0' },
        },
      });
    case 'tools/list':
      return send({
        id: request.id,
        result: {
          tools: [
            {
              name: 'probe_tool',
              description: 'Returns the word of the day.',
              inputSchema: { type: 'object', properties: { q: { type: 'string' } } },
            },
          ],
        },
      });
    case 'tools/call':
      return send({
        id: request.id,
        result: {
          content: [{ type: 'text', text: `probe says: the word is ${PROBE_WORD}` }],
          isError: false,
        },
      });
    case 'ping':
      return send({ id: request.id, result: {} });
    default:
      return send({ id: request.id, error: { code: -32601, message: `no method ${request.method}` } });
  }
});
