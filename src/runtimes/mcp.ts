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

/** A remote (HTTP or SSE) server: reached at its url, nothing to start. */
export interface McpRemote {
  name: string;
  url: string;
  headers: Record<string, string>;
  transport: 'http' | 'sse';
}

export function mcpRemote(server: McpServer): McpRemote | null {
  return server.url
    ? {
        name: server.server,
        url: server.url,
        headers: { ...(server.headers ?? {}) },
        transport: server.transport ?? 'http',
      }
    : null;
}

/**
 * Claude's and Gemini's shape: `{mcpServers: {<name>: {command, args, env}}}`; a remote server is
 * `{type: "http"|"sse", url, headers}` for Claude, `{httpUrl|url, headers}` for Gemini (its
 * `url` is SSE, `httpUrl` streamable HTTP).
 */
export function mcpServersJson(
  servers: readonly McpServer[],
  cli: 'claude' | 'gemini',
): Record<string, Record<string, unknown>> {
  return Object.fromEntries(
    servers.map((server) => {
      const remote = mcpRemote(server);
      if (!remote) {
        const s = mcpLaunch(server);
        return [s.name, { command: s.command, args: s.args, env: s.env }];
      }
      const { name, url, headers, transport } = remote;
      return [
        name,
        cli === 'claude'
          ? { type: transport, url, headers }
          : { [transport === 'http' ? 'httpUrl' : 'url']: url, headers },
      ];
    }),
  );
}
