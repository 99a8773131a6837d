import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallSession } from './call-session.js';
import { MessageLimit, tooLargeAnswer } from './message-limit.js';
import { troupeMcpServer } from './troupe-server.js';

/**
 * `troupe mcp`: troupe's server on stdin/stdout, for the one runtime call whose identity the
 * environment carries. Resolves when the client goes away (its CLI closes stdin).
 */
export async function serveStdio(env: NodeJS.ProcessEnv): Promise<void> {
  const session = CallSession.fromEnv(env);
  const server = troupeMcpServer(session);
  // a message over the limit is answered here and never reaches the SDK's transport
  const input = process.stdin.pipe(
    new MessageLimit((id, bytes) => process.stdout.write(tooLargeAnswer(id, bytes))),
  );
  const transport = new StdioServerTransport(input);
  const closed = new Promise<void>((resolve) => {
    transport.onclose = resolve;
    input.once('end', resolve);
  });
  await server.connect(transport);
  await closed;
  await server.close();
  session.close();
}
