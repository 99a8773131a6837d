import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { execa } from 'execa';
import { afterEach, describe, expect, it } from 'vitest';
import { tmpRepo } from './support/git-repo.js';
import { until } from './support/live.js';
import { bin, repoRoot, troupe } from './support/troupe.js';

// AMQ's `integration kanban bridge`, through the built CLI, against a stand-in for Kanban's
// runtime WebSocket: a tiny server that sends the recorded stream as text frames.

/** A server frame: FIN + text, unmasked, with the 7/16/64-bit length forms. */
function textFrame(text: string): Buffer {
  const payload = Buffer.from(text);
  const n = payload.length;
  const head = n < 126 ? Buffer.from([0x81, n]) : n < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (n >= 126 && n < 65536) {
    head[0] = 0x81;
    head[1] = 126;
    head.writeUInt16BE(n, 2);
  } else if (n >= 65536) {
    head[0] = 0x81;
    head[1] = 127;
    head.writeBigUInt64BE(BigInt(n), 2);
  }
  return Buffer.concat([head, payload]);
}

let server: Server | undefined;
afterEach(() => void server?.close());

function kanbanStandIn(frames: string[]): Promise<{ url: string; connections: () => number }> {
  let connections = 0;
  const sockets: Socket[] = [];
  server = createServer((_req, res) => res.writeHead(404).end());
  server.on('upgrade', (req, socket: Socket) => {
    connections++;
    sockets.push(socket);
    const accept = createHash('sha1')
      .update(`${req.headers['sec-websocket-key']}258EAFA5-E914-47DA-95CA-C5AB0DC85B11`)
      .digest('base64');
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: ${accept}\r\n\r\n`,
    );
    // the first connection gets the stream then drops; later ones get the snapshot only
    const send = connections === 1 ? frames : frames.slice(0, 1);
    for (const f of send) socket.write(textFrame(f));
    if (connections === 1) setTimeout(() => socket.destroy(), 200);
  });
  server.on('close', () => {
    for (const s of sockets) s.destroy();
  });
  return new Promise((resolve) =>
    server!.listen(0, '127.0.0.1', () =>
      resolve({
        url: `ws://127.0.0.1:${(server!.address() as AddressInfo).port}/api/runtime/ws`,
        connections: () => connections,
      }),
    ),
  );
}

describe('troupe bus integration kanban bridge', () => {
  it("mails each transition of Kanban's runtime stream, reconnects when it drops, and stops on SIGTERM", async () => {
    const dir = await tmpRepo();
    expect((await troupe(dir, ['bus', 'init', '--root', '.agent-mail', '--agents', 'codex'])).code).toBe(0);
    const frames = readFileSync(join(repoRoot, 'test', 'fixtures', 'kanban', 'runtime-stream.jsonl'), 'utf8')
      .split('\n')
      .filter(Boolean);
    const kanban = await kanbanStandIn([...frames, 'not json']);
    const bridge = execa(
      'node',
      [
        bin,
        'bus',
        'integration',
        'kanban',
        'bridge',
        '--me',
        'codex',
        '--root',
        '.agent-mail',
        '--url',
        kanban.url,
        '--reconnect-delay',
        '300ms',
      ],
      { cwd: dir, reject: false, env: { NO_COLOR: '1' } },
    );
    const list = async () =>
      JSON.parse(
        (await troupe(dir, ['bus', 'list', '--root', '.agent-mail', '--me', 'codex', '--json'])).stdout,
      ) as Array<{
        subject: string;
      }>;
    await until('the three notifications', async () => (await list()).length === 3, 20_000);
    expect((await list()).map((m) => m.subject).sort()).toEqual([
      '[kanban] failed: Add rate limiting to /login',
      '[kanban] review: Fix flaky session test',
      '[kanban] running: Add rate limiting to /login',
    ]);
    await until('a reconnect after the drop', () => kanban.connections() >= 2, 10_000);
    bridge.kill('SIGTERM');
    const done = await bridge;
    expect(done.exitCode).toBe(0);
    expect(String(done.stderr)).toMatch(/ignoring a frame that is not JSON/);
    expect(String(done.stderr)).toMatch(/reconnecting in 300 ms/);
    // a fresh snapshot after the reconnect mails nothing again
    expect(await list()).toHaveLength(3);

    const bad = await troupe(dir, [
      'bus',
      'integration',
      'kanban',
      'bridge',
      '--me',
      'codex',
      '--root',
      '.agent-mail',
      '--url',
      'http://x',
    ]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/^troupe: --url must be a ws:\/\/ or wss:\/\/ URL/);
  }, 60_000);
});
