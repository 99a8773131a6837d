/**
 * commander's own errors (an unknown option or command, a missing argument, a bad choice) as
 * troupe says every error: one `troupe:` line, then a hint. `command` is the command the user
 * typed, when it is one troupe has.
 */
export function usageErrorLines(message: string, command: string | null): string {
  const line = message
    .replace(/^error: /, '')
    .replace(/\s*\(Did you mean (.*)\?\)\s*$/s, ' (did you mean $1?)')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  const hint = command
    ? `\`troupe ${command} --help\` shows its usage`
    : '`troupe --help` lists the commands';
  return `troupe: ${line}\n  hint: ${hint}\n`;
}
