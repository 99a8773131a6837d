import { z } from 'zod';

/**
 * The shapes troupe accepts in a team's files (docs/swarm.md has their sources). Written by
 * Claude Code, by AMQ or by anyone who can write ~/.claude, so each member and task is checked
 * on its own: one that does not fit is skipped with a warning, never a crash. Unknown keys are
 * kept (writes carry them back); a `null` where a string may be missing counts as missing.
 */

const text = z.string().nullish();
const taskId = z.union([z.string().min(1), z.number()]).transform(String);

export const MemberSchema = z.looseObject({
  name: z.string().min(1),
  agentId: text,
  agent_id: text,
  agentType: text,
  agent_type: text,
});

export const TaskSchema = z.looseObject({
  id: taskId,
  subject: text,
  title: text,
  status: text,
  owner: text,
  assigned_to: text,
  blockedBy: z.array(taskId).nullish(),
  depends_on: z.array(taskId).nullish(),
});

/** A schema's first complaint in one line: `name: Invalid input: expected string, received null`. */
export function reasonOf(error: z.ZodError): string {
  const issue = error.issues[0]!;
  return issue.path.length ? `${issue.path.join('.')}: ${issue.message}` : issue.message;
}

/** What is told about a file or an entry troupe passes over. */
export type Warn = (message: string) => void;
