// A child process for the bus reliability tests (crash safety, concurrency). Plain JS on the
// built library (dist/bus), so each run costs only a Node start-up.
//   crash <root> <run>                 deliver run-specific messages in a loop until killed
//   send  <root> <from> <count>        send <count> messages to `inbox` through the bus
//   drain <root> <stop-file>           drain `inbox` until it is empty and <stop-file> exists
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { openBus } from '../../dist/bus/bus.js';
import { deliver } from '../../dist/bus/deliver.js';
import { mailbox } from '../../dist/bus/layout.js';

const [mode, root, a, b] = process.argv.slice(2);

/** The bytes of message `j` of crash run `run`: deterministic, so a retry sends identical bytes. */
export function crashMessage(run, j) {
  const size = 1 + ((run * 7919 + j * 104729) % (256 * 1024));
  const payload = createHash('sha256')
    .update(`${run}/${j}`)
    .digest('hex')
    .repeat(Math.ceil(size / 64))
    .slice(0, size);
  const sha = createHash('sha256').update(payload).digest('hex');
  return Buffer.from(`---json\n{"id":"crash-${run}-${j}"}\n---\nsha:${sha}\n${payload}\n`);
}

if (mode === 'crash') {
  const run = Number(a);
  const to = mailbox(root, 'inbox');
  const from = mailbox(root, 'sender');
  process.stdout.write('ready\n');
  for (let j = 0; ; j++) {
    deliver([{ box: to }], `crash-${run}-${j}.md`, crashMessage(run, j), from);
    process.stdout.write(`done ${j}\n`);
  }
} else if (mode === 'send') {
  const bus = openBus(root);
  for (let i = 0; i < Number(b); i++)
    bus.send({ from: a, to: 'inbox', subject: `${a} ${i}`, body: `message ${i} from ${a}` });
} else if (mode === 'drain') {
  const bus = openBus(root);
  const ids = [];
  for (;;) {
    const stopping = existsSync(a);
    const items = bus.drain('inbox', { limit: 20 });
    for (const item of items) ids.push(item.id);
    if (items.length === 0) {
      if (stopping) break;
      await new Promise((r) => setTimeout(r, 5));
    }
  }
  process.stdout.write(JSON.stringify(ids));
}
