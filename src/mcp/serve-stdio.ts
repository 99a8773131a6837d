import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallSession } from './call-session.js';
import { troupeMcpServer } from './troupe-server.js';

/**
 * `troupe mcp`: troupe's server on stdin/stdout, for the one runtime call whose identity the
 * environment carries. Resolves when the client goes away (its CLI closes stdin).
 */
export async function serveStdio(env: NodeJS.ProcessEnv): Promise<void> {
  const session = CallSession.fromEnv(env);
  const server = troupeMcpServer(session);
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    process.stdin.once('end', resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
  session.close();
}
