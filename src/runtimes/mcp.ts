import type { McpServer } from '../core/pipeline.js';

export interface McpLaunch {
  name: string;
  command: string;
  args: string[];
  env: Record<string, string>;
}

/**
 * How to start an MCP server, as aqm: a server without a command is the reference server of
 * that name, run through `npx -y @modelcontextprotocol/server-<name>` with the given args.
 */
export function mcpLaunch(server: McpServer): McpLaunch {
  return server.command
    ? { name: server.server, command: server.command, args: [...server.args], env: { ...(server.env ?? {}) } }
    : {
        name: server.server,
        command: 'npx',
        args: ['-y', `@modelcontextprotocol/server-${server.server}`, ...server.args],
        env: { ...(server.env ?? {}) },
      };
}

/** Claude's and Gemini's shape: `{mcpServers: {<name>: {command, args, env}}}`. */
export function mcpServersJson(
  servers: readonly McpServer[],
): Record<string, { command: string; args: string[]; env: Record<string, string> }> {
  return Object.fromEntries(
    servers.map(mcpLaunch).map((s) => [s.name, { command: s.command, args: s.args, env: s.env }]),
  );
}
