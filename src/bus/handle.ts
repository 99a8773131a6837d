import { UsageError } from '../core/errors.js';
import { PERSON_MAILBOX } from '../core/task-mail.js';

/** The reserved handle of the person; always a known recipient, never listed in config. */
export const HUMAN = PERSON_MAILBOX;

const HANDLE = /^[a-z0-9_-]+$/;

export function isValidHandle(handle: string): boolean {
  return HANDLE.test(handle) && !handle.startsWith('-');
}

/** What a user types (`Codex `) to what the bus stores (`codex`). */
export function normalizeHandle(raw: string): string {
  return raw.trim().toLowerCase();
}

/** Normalizes and checks a handle given on the command line or by a caller. */
export function parseHandle(raw: string, what = 'handle'): string {
  const handle = normalizeHandle(raw);
  if (!isValidHandle(handle)) {
    throw new UsageError(`invalid ${what} '${raw}': use lower-case letters, digits, '_' and '-' only`);
  }
  return handle;
}

/** A name that can never leave its directory: no separators, no NUL, not `.`/`..`, not hidden. */
export function isSafeBaseName(name: string): boolean {
  return (
    name.length > 0 &&
    !name.startsWith('.') &&
    !name.includes('/') &&
    !name.includes('\\') &&
    !name.includes('\0')
  );
}

/** AMQ's ValidateMessageFilename: a safe base name ending in `.md`. */
export function isMessageFilename(name: string): boolean {
  return isSafeBaseName(name) && name.endsWith('.md') && name.length > 3;
}

/** A header id: a safe base name that does not itself end in `.md`. */
export function isSafeMessageId(id: string): boolean {
  return isSafeBaseName(id) && !id.endsWith('.md');
}

/** `--id X` may omit `.md`; anything that could escape the mailbox is a usage error. */
export function messageFilename(idOrName: string): string {
  const name = idOrName.endsWith('.md') ? idOrName : `${idOrName}.md`;
  if (!isMessageFilename(name)) throw new UsageError(`invalid message id '${idOrName}'`);
  return name;
}
