import { createConnection, createServer, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { PG_URL, postgresUnreachable } from '../../../test/support/postgres.js';
import { SyncPg } from './sync-client.js';

/** A TCP relay to the real PostgreSQL that counts the connections made through it. */
async function countingRelay() {
  const target = new URL(PG_URL);
  const sockets = new Set<Socket>();
  let accepted = 0;
  const server = createServer((client) => {
    accepted++;
    const upstream = createConnection(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('error', () => {});
      socket.on('close', () => sockets.delete(socket));
    }
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const url = new URL(PG_URL);
  url.port = String(port);
  return {
    url: url.toString(),
    accepted: () => accepted,
    close() {
      for (const socket of sockets) socket.destroy();
      server.close();
    },
  };
}

const unreachable = await postgresUnreachable();

describe.skipIf(unreachable)('SyncPg, closed', () => {
  it('before its worker thread runs: the thread is stopped and never connects; once it runs, it connects', async () => {
    const relay = await countingRelay();
    const open = (name: string) =>
      new SyncPg({
        // the worker thread LISTENs to the channel as soon as it runs
        channel: 'troupe_sync_client_test',
        connection: { connectionString: relay.url, application_name: name },
        leaseMs: 30_000,
        renewMs: 10_000,
        answerTimeoutMs: 10_000,
        native: null,
      });
    try {
      open('troupe-closed-at-once').close();
      // far longer than a worker thread takes to start and connect (the second case shows it does)
      await sleep(2000);
      expect(relay.accepted()).toBe(0);

      const running = open('troupe-left-open');
      for (let i = 0; i < 200 && relay.accepted() === 0; i++) await sleep(50);
      expect(relay.accepted()).toBe(1);
      // its connection is cut first: this thread, which relays it, blocks in close()
      relay.close();
      running.close();
    } finally {
      relay.close();
    }
  });
});
