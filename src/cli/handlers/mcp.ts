// the MCP SDK is loaded only through this module, so no other command starts slower for it
import { serveStdio } from '../../mcp/serve-stdio.js';

/** `troupe mcp`: troupe's MCP server on stdio until its client hangs up (stdio is the protocol's, not a CommandIo). */
export async function mcp(env: NodeJS.ProcessEnv): Promise<number> {
  await serveStdio(env);
  return 0;
}
