import { randomUUID } from 'node:crypto';
import type { Adapter } from './launch-config.js';

export interface AgentLaunch {
  argv: string[];
  /** The conversation this run continues or starts, when known before it starts. */
  conversationId: string | null;
  resumed: boolean;
}

/**
 * How each CLI is started with troupe's standing instruction, and how it resumes one exact
 * conversation (never its "last" or "continue" guess):
 * - claude: the instruction as `--append-system-prompt` (every launch: it is not part of the
 *   conversation); a new conversation gets the id troupe chose (`--session-id`), a relaunch
 *   `--resume <id>`.
 * - gemini: `--session-id <id>` chosen by troupe, and the instruction as the first prompt of an
 *   interactive session (`-i`); a relaunch `--resume <id>`, whose history holds the instruction.
 * - codex: the instruction as the first prompt (`codex "<prompt>"`); codex picks its own id, which
 *   troupe finds in its session files by the launch nonce in that prompt (conversation-id.ts); a
 *   relaunch `codex resume <id>`.
 */
export function agentLaunch(
  adapter: Adapter,
  command: string[],
  instruction: string,
  previousId: string | null,
  newId: () => string = randomUUID,
): AgentLaunch {
  const [bin, ...rest] = command as [string, ...string[]];
  return LAUNCHERS[adapter]({ bin, rest, instruction, previousId, newId });
}

interface LaunchInput {
  bin: string;
  /** The committed arguments after the CLI. */
  rest: string[];
  instruction: string;
  previousId: string | null;
  newId: () => string;
}

const LAUNCHERS: Record<Adapter, (input: LaunchInput) => AgentLaunch> = {
  claude: ({ bin, rest, instruction, previousId, newId }) => {
    const id = previousId ?? newId();
    return {
      argv: [
        bin,
        ...rest,
        ...(previousId ? ['--resume', id] : ['--session-id', id]),
        '--append-system-prompt',
        instruction,
      ],
      conversationId: id,
      resumed: previousId !== null,
    };
  },
  gemini: ({ bin, rest, instruction, previousId, newId }) => {
    if (previousId)
      return { argv: [bin, ...rest, '--resume', previousId], conversationId: previousId, resumed: true };
    const id = newId();
    return {
      argv: [bin, ...rest, '--session-id', id, '-i', instruction],
      conversationId: id,
      resumed: false,
    };
  },
  codex: ({ bin, rest, instruction, previousId }) =>
    previousId
      ? { argv: [bin, 'resume', ...rest, previousId], conversationId: previousId, resumed: true }
      : { argv: [bin, ...rest, instruction], conversationId: null, resumed: false },
};
