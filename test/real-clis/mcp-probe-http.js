// The probe MCP server of mcp-probe.js (one tool, `probe_tool`, whose answer carries a word the
// model cannot guess), served over streamable HTTP at /mcp for the remote (`url:`) scenarios,
// statelessly, with the SDK's own transport. Every JSON-RPC request is recorded with its params
// and the headers it came with.
import http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

export const PROBE_WORD = 'TANGERINE-42';

/** Starts it on a free loopback port: `{url, calls, close}`; `calls` are `{method, params, headers}`. */
export async function startHttpProbe() {
  const calls = [];
  const server = http.createServer(async (req, res) => {
    if (req.method !== 'POST' || new URL(req.url ?? '/', 'http://x').pathname !== '/mcp') {
      res.writeHead(405).end();
      return;
    }
    const chunks = [];
    for await (const chunk of req) chunks.push(chunk);
    const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
    for (const message of Array.isArray(body) ? body : [body])
      calls.push({ method: message.method, params: message.params, headers: req.headers });
    const mcp = new McpServer({ name: 'probe', version: '1.0.0' });
    mcp.registerTool(
      'probe_tool',
      { description: 'Returns the word of the day.', inputSchema: { q: z.string().optional() } },
      async () => ({ content: [{ type: 'text', text: `probe says: the word is ${PROBE_WORD}` }] }),
    );
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    res.on('close', () => {
      transport.close();
      mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, body);
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}/mcp`,
    calls,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
