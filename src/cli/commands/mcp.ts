import type { Command } from 'commander';
import { action } from '../action.js';

export function registerMcp(program: Command): void {
  program
    .command('mcp')
    .description("troupe's MCP server on stdio, for agents with `mcp: [troupe]` (troupe starts it)")
    .action(action(async () => (await import('../handlers/mcp.js')).mcp(process.env)));
}
