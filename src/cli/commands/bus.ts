import type { Command } from 'commander';
import { action } from '../action.js';
import { type CommandIo, processIo } from '../command-io.js';
import type { BusFlags } from '../handlers/bus/context.js';

type BusHandler = (flags: BusFlags, io: CommandIo) => Promise<number>;

const messaging = () => import('../handlers/bus/messaging.js');
const operations = () => import('../handlers/bus/operations.js');
const waiting = () => import('../handlers/bus/waiting.js');
const setup = () => import('../handlers/bus/setup.js');
const swarm = () => import('../handlers/bus/swarm.js');
const integration = () => import('../handlers/bus/integration.js');
const shell = () => import('../handlers/bus/shell.js');
const coop = () => import('../handlers/bus/coop.js');

/**
 * Each verb's handler (handlers/bus/), loaded when the verb runs, so `troupe --version` does not
 * pay for the bus library. The compiler checks that each one exists and takes (flags, io).
 */
export const BUS_HANDLERS = {
  init: async () => (await operations()).init,
  send: async () => (await messaging()).send,
  reply: async () => (await messaging()).reply,
  list: async () => (await messaging()).list,
  read: async () => (await messaging()).read,
  drain: async () => (await messaging()).drain,
  thread: async () => (await messaging()).thread,
  receiptsList: async () => (await operations()).receiptsList,
  receiptsWait: async () => (await waiting()).receiptsWait,
  dlqList: async () => (await operations()).dlqList,
  dlqRead: async () => (await operations()).dlqRead,
  dlqRetry: async () => (await operations()).dlqRetry,
  dlqPurge: async () => (await operations()).dlqPurge,
  presenceSet: async () => (await operations()).presenceSet,
  presenceList: async () => (await operations()).presenceList,
  who: async () => (await operations()).who,
  watch: async () => (await waiting()).watch,
  monitor: async () => (await waiting()).monitor,
  doctor: async () => (await operations()).doctor,
  setup: async () => (await setup()).setup,
  cleanup: async () => (await operations()).cleanup,
  coopInit: async () => (await coop()).coopInit,
  swarmList: async () => (await swarm()).swarmList,
  swarmTasks: async () => (await swarm()).swarmTasks,
  swarmJoin: async () => (await swarm()).swarmJoin,
  swarmClaim: async () => (await swarm()).swarmClaim,
  swarmComplete: async () => (await swarm()).swarmComplete,
  swarmBridge: async () => (await swarm()).swarmBridge,
  symphonyEmit: async () => (await integration()).symphonyEmit,
  symphonyInit: async () => (await integration()).symphonyInit,
  kanbanEmit: async () => (await integration()).kanbanEmit,
  kanbanBridge: async () => (await integration()).kanbanBridge,
  env: async () => (await shell()).env,
  shellSetup: async () => (await shell()).shellSetup,
  routeExplain: async () => (await shell()).routeExplain,
} satisfies Record<string, () => Promise<BusHandler>>;

/** A verb's action: commander passes the flags second to last (the command itself is last). */
function run(verb: keyof typeof BUS_HANDLERS) {
  return (...args: unknown[]): Promise<void> =>
    action(async () => (await BUS_HANDLERS[verb]())(args.at(-2) as BusFlags, processIo()))();
}

/** The message of `send` and `reply`: its body, subject, kind, priority, labels and context. */
function messageOptions(cmd: Command, help: { subject: string; kind: string; priority: string }): Command {
  return cmd
    .option('--body <text>', 'body: text, @file, or - for stdin (default: stdin)')
    .option('--subject <text>', help.subject)
    .option('--kind <kind>', help.kind)
    .option('--priority <p>', help.priority)
    .option('--labels <list>', 'labels, comma- or space-separated')
    .option('--context <json>', 'a JSON object, or @file.json');
}

/** How `send` and `reply` deliver: an empty body allowed, and waiting for the recipient's receipt. */
function deliveryOptions(cmd: Command): Command {
  return cmd
    .option('--allow-empty', 'allow an empty body')
    .option('--wait-for <stage>', "wait for the recipient's receipt: drained|dlq")
    .option('--wait-timeout <duration>', 'how long --wait-for waits (0 = forever)', '120s');
}

/** `troupe bus <verb>`: AMQ's mailbox commands over the same files. Registration only. */
export function registerBus(program: Command): void {
  const bus = program
    .command('bus')
    .description('agent mailboxes on disk, compatible with AMQ (send, drain, reply, watch, ...)');

  // a verb of `troupe bus`, or of one of its groups (receipts, dlq, presence)
  const verb = (name: string, description: string, parent: Command = bus) =>
    parent
      .command(name)
      .description(description)
      .option('--root <dir>', 'mailbox root (else AM_ROOT, .amqrc, AMQ_GLOBAL_ROOT, .agent-mail)')
      .option('--json', 'print JSON');
  const me = (cmd: Command) =>
    cmd
      .option('--me <handle>', 'your handle (else AM_ME)')
      .option('--strict', 'refuse unknown handles and non-1 schemas')
      .option('--ignore-session-pin', 'allow an explicit --root that differs from the pinned session');
  const collect = (value: string, previous: string[] = []) => [...previous, value];
  verb('init', 'create a root with a mailbox for each agent and for `user`')
    .requiredOption('--agents <list>', 'comma-separated agent handles')
    .option('--force', 'overwrite an existing meta/config.json')
    .action(run('init'));

  deliveryOptions(
    messageOptions(
      me(verb('send', 'deliver a message to one or more mailboxes')).requiredOption(
        '--to <handles>',
        'recipients, comma-separated (codex, codex@project[:session])',
      ),
      {
        subject: 'subject',
        kind: 'brainstorm|review_request|review_response|question|answer|decision|status|todo',
        priority: 'urgent|normal|low (normal when --kind is given)',
      },
    )
      .option('--thread <id>', 'thread id (required with several recipients)')
      .option('--refs <ids>', 'referenced message ids, comma-separated')
      .option('--session <name>', 'deliver into this session of the base root')
      .option('--project <name>', 'deliver to this peer project (.amqrc peers)')
      .option('--from-session <name>', 'send as from this session of the base --root (needs --session)')
      .option('--allow-self', 'allow sending to yourself'),
  ).action(run('send'));

  deliveryOptions(
    messageOptions(
      me(verb('reply', 'reply on the thread of a message, to whoever should get it')).requiredOption(
        '--id <id>',
        'the message to reply to',
      ),
      {
        subject: 'subject (default: Re: <original>)',
        kind: 'kind (default: answer to a question, review_response to a review_request)',
        priority: 'urgent|normal|low',
      },
    ),
  ).action(run('reply'));

  me(verb('list', 'list messages without moving them'))
    .option('--new', 'unread messages (default)')
    .option('--cur', 'read messages')
    .option('--from <handle>', 'only from this sender')
    .option('--kind <kind>', 'only this kind')
    .option('--priority <p>', 'only this priority')
    .option('--label <label>', 'only with this label (repeatable: all must match)', collect)
    .option('--thread <id>', 'only on this thread')
    .option('--limit <n>', 'at most n (0 = all)', '0')
    .option('--offset <n>', 'skip n', '0')
    .action(run('list'));

  me(verb('read', 'print one message and mark it read'))
    .requiredOption('--id <id>', 'message id')
    .action(run('read'));

  me(verb('drain', 'read all new messages at once (moves them to cur, writes receipts)'))
    .option('--limit <n>', 'at most n (0 = all)', '20')
    .option('--include-body', 'include message bodies')
    .action(run('drain'));

  me(verb('thread', 'every message on a thread, oldest first'))
    .requiredOption('--id <thread>', 'thread id')
    .option('--agents <list>', 'mailboxes to scan (default: configured agents and user)')
    .option('--include-body', 'include message bodies')
    .option('--limit <n>', 'only the last n (0 = all)', '0')
    .action(run('thread'));

  const receipts = bus.command('receipts').description('delivery receipts (drained, dlq)');
  me(verb('list', "list a consumer's receipts, oldest first", receipts))
    .option('--msg-id <id>', 'only for this message')
    .option('--stage <stage>', 'only drained or dlq')
    .action(run('receiptsList'));
  me(verb('wait', 'wait until a message is drained (or dead-lettered)', receipts))
    .requiredOption('--msg-id <id>', 'message id')
    .option('--consumer <handle>', 'whose receipt (default: the recipient, from your outbox)')
    .option('--stage <stage>', 'drained|dlq', 'drained')
    .option('--timeout <duration>', '0 = forever', '60s')
    .option('--poll-interval <duration>', 'how often to look', '1s')
    .action(run('receiptsWait'));

  const dlq = bus.command('dlq').description('dead-letter queue: messages that could not be read');
  const dlqVerb = (name: string, description: string) => me(verb(name, description, dlq));
  dlqVerb('list', 'list dead letters')
    .option('--new', 'only not yet inspected')
    .option('--cur', 'only inspected')
    .action(run('dlqList'));
  dlqVerb('read', 'show a dead letter and mark it inspected')
    .requiredOption('--id <id>', 'DLQ id')
    .action(run('dlqRead'));
  dlqVerb('retry', 'redeliver the original message')
    .option('--id <id>', 'DLQ id')
    .option('--all', 'every dead letter')
    .option('--force', 'retry past the 3-retry limit')
    .action(run('dlqRetry'));
  dlqVerb('purge', 'delete dead letters')
    .option('--older-than <duration>', 'only those that failed longer ago than this')
    .option('--dry-run', 'only list what would go')
    .option('--yes', 'do not ask')
    .action(run('dlqPurge'));

  const coopGroup = bus
    .command('coop')
    .description("AMQ's co-op bootstrap (`troupe session exec` is coop exec)");
  coopGroup
    .command('init')
    .description('mailboxes and an .amqrc at the Git top, kept out of git (AMQ coop init)')
    .option('--root <dir>', 'the root, relative to the Git top (default .agent-mail)')
    .option('--json', 'print JSON: {root, agents, amqrc_written, config_written, gitignore_updated}')
    .option('--agents <list>', 'comma-separated agent handles', 'claude,codex')
    .option('--force', 'overwrite an existing .amqrc and meta/config.json')
    .action(run('coopInit'));

  const presence = bus.command('presence').description("who is around: an agent's status");
  me(verb('set', 'set your status', presence))
    .requiredOption('--status <status>', 'free text, e.g. busy, reviewing')
    .option('--note <text>', 'a note')
    .action(run('presenceSet'));
  verb('list', 'every status in this root', presence).action(run('presenceList'));

  verb('who', 'agents in the base root and its sessions, and whether they are active').action(run('who'));

  me(verb('watch', 'wait for new mail without consuming it'))
    .option('--timeout <duration>', '0 = forever', '60s')
    .option('--poll', 'poll instead of file-system events')
    .action(run('watch'));

  me(verb('monitor', 'drain new mail, waiting for some if there is none'))
    .option('--timeout <duration>', '0 = forever', '60s')
    .option('--limit <n>', 'at most n (0 = all)', '20')
    .option('--peek', 'list instead of draining')
    .option('--include-body', 'include message bodies')
    .option('--poll', 'poll instead of file-system events')
    .action(run('monitor'));

  verb('doctor', 'check the root, config and mailboxes (exits 0 whatever it finds)')
    .option('--ops', 'add queue depths, DLQ and presence per agent')
    .option('--fix-mailboxes', 'create missing mailbox directories')
    .option(
      '--fix-wake-locks',
      'remove wake locks whose owner is proven gone (re-checked first; implies --ops)',
    )
    .option(
      '--json-schema <n>',
      "1 (default) or 2: each wake lock with wake check's action contract (needs --json)",
    )
    .option('--ignore-session-pin', 'allow an explicit --root that differs from the pinned session')
    .action(run('doctor'));

  bus
    .command('setup')
    .description("detect agent CLIs; write AMQ's .amqrc, .amq/launch.json, the session and mailboxes")
    .option('--json', 'print JSON')
    .option('--preview', 'print the plan and its digest; write nothing')
    .option('--apply <digest>', 'write the plan if its digest is still this one (else exit 6)')
    .option('--agents <list>', 'roster: handles or handle:cli (default: one per CLI found)')
    .option('--default-session <name>', 'default session, in .amq/launch.json (default: collab)')
    .option('--session <name>', 'the same as --default-session (troupe’s earlier spelling)')
    .option(
      '--launcher-preference <list>',
      'launchers to try in order, in .amq/launch.local.json: cmux, ghostty, tmux, commands',
    )
    .option('-y, --yes', 'write the plan without a preview')
    .action(run('setup'));

  bus
    .command('env')
    .description(
      'print the AM_ROOT/AM_ME context that pins a shell to one root: eval "$(troupe bus env ...)"',
    )
    .option('--me <handle>', 'your handle (else AM_ME)')
    .option('--root <dir>', 'pin this root')
    .option('--session <name>', 'pin this session of the base root (it must exist)')
    .option('--shell <shell>', 'sh | bash | zsh | fish', 'sh')
    .option('--export', 'also note on stderr that the terminal is pinned')
    .option('--wake', "also start this agent's wake (troupe wake --detach)")
    .option('--session-name', 'print only the session name (empty outside a session)')
    .option('--json', 'print JSON')
    .action(run('env'));

  bus
    .command('shell-setup')
    .description('print co-op shortcuts (amc, amx, amg) for a shell rc file: <alias> [session] [args]')
    .option('--shell <shell>', 'bash | zsh | fish (default: from $SHELL)')
    .option('--claude-alias <name>', 'name of the claude shortcut', 'amc')
    .option('--codex-alias <name>', 'name of the codex shortcut', 'amx')
    .option('--gemini-alias <name>', 'name of the gemini shortcut', 'amg')
    .action(run('shellSetup'));

  const route = bus.command('route').description('how mail would be routed');
  me(verb('explain', 'where a send would be delivered now, and the exact command; sends nothing', route))
    .requiredOption('--to <handle>', 'the recipient (codex, codex@project[:session])')
    .option('--project <name>', 'a peer project')
    .option('--session <name>', 'a session of the base root')
    .option('--from-root <dir>', 'the root to send from (the same as --root)')
    .action(run('routeExplain'));

  bus
    .command('trace <message-id>')
    .description(
      "a message's path in this root: copies, route, delivery, DLQ, receipts, replies (exit 3 if none)",
    )
    .option('--root <dir>', 'mailbox root (else AM_ROOT, .amqrc, AMQ_GLOBAL_ROOT, .agent-mail)')
    .option('--json', 'print JSON (amq/trace/v1)')
    .action((id: string, flags: BusFlags) =>
      action(async () => (await shell()).trace(id, flags, processIo()))(),
    );

  verb('cleanup', "remove leftover temp files, AMQ's quarantined wake files, a session's launch journal")
    .option('--tmp-older-than <duration>', 'temp files older than this (e.g. 1h)')
    .option('--wake-quarantine-older-than <duration>', 'quarantined wake files older than this (e.g. 24h)')
    .option('--launch-journal', 'the launch recovery journal of the session (--root <session root>)')
    .option('--dry-run', 'only list them')
    .option('--yes', 'do not ask')
    .action(run('cleanup'));

  const swarm = bus
    .command('swarm')
    .description('join a Claude Code Agent Team, claim its tasks, bridge them to the bus');
  const teamVerb = (name: string, description: string) =>
    verb(name, description, swarm).requiredOption('--team <name>', 'the team (~/.claude/teams/<name>)');
  verb('list', 'Claude Code agent teams and their members', swarm).action(run('swarmList'));
  teamVerb('tasks', "the team's shared task list").action(run('swarmTasks'));
  me(teamVerb('join', 'join the team as a member')).action(run('swarmJoin'));
  me(teamVerb('claim', 'take a task of the team: owner you, in progress'))
    .requiredOption('--task <id>', 'the task id')
    .action(run('swarmClaim'));
  me(teamVerb('complete', 'mark a task you hold completed'))
    .requiredOption('--task <id>', 'the task id')
    .action(run('swarmComplete'));
  me(teamVerb('bridge', "mail the team's task changes to your inbox until stopped"))
    .option('--poll-interval <duration>', 'also look this often', '3s')
    .action(run('swarmBridge'));

  const integration = bus
    .command('integration')
    .description('orchestrator events as bus messages (AMQ adapters)');
  const symphony = integration.command('symphony').description('Symphony workspace hooks');
  me(verb('init', "add the emit hooks to WORKFLOW.md's four hooks (AMQ's managed fragment)", symphony))
    .option('--workflow <file>', 'the workflow file', 'WORKFLOW.md')
    .option('--check', 'only say whether the managed hooks are there')
    .option('--force', 'rewrite managed hooks that are there')
    .action(run('symphonyInit'));
  me(verb('emit', 'mail yourself a Symphony hook event (run it from the hook)', symphony))
    .requiredOption('--event <event>', 'after_create | before_run | after_run | before_remove')
    .option('--workspace <dir>', "the issue's workspace (default: the working directory)")
    .option('--identifier <key>', "the workspace key (default: the workspace directory's name)")
    .action(run('symphonyEmit'));
  const kanban = integration.command('kanban').description('Cline Kanban runtime events');
  me(
    verb(
      'emit',
      "mail yourself the task transitions in Kanban's runtime messages (JSON lines on stdin)",
      kanban,
    ),
  ).action(run('kanbanEmit'));
  me(verb('bridge', "mail yourself the task transitions of Kanban's runtime WebSocket until stopped", kanban))
    .option('--url <ws-url>', "Kanban's runtime stream", 'ws://127.0.0.1:3484/api/runtime/ws')
    .option('--workspace-id <id>', "only this workspace's tasks")
    .option('--reconnect-delay <duration>', 'wait before reconnecting after the stream drops', '2s')
    .action(run('kanbanBridge'));
}
