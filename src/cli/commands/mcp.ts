import type { Command } from 'commander';
import { action } from '../action.js';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description("troupe's MCP server on stdio, for agents with `mcp: [troupe]` (troupe starts it)")
    .action(
      action(async () => {
        // the SDK is loaded only here, so no other command starts slower for it
        const { serveStdio } = await import('../../mcp/serve-stdio.js');
        await serveStdio(process.env);
        return 0;
      }),
    );
}
