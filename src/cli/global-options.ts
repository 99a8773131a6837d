/**
 * Takes `--store <value>` (or `--store=<value>`) out of the command line, wherever it stands
 * before a `--`. Commander's positional options (needed so that `publish --version` is the
 * command's own) would otherwise accept it only before the command, and people write
 * `troupe status T-1 --store postgres://…` as naturally as `troupe --store … status T-1`.
 */
export function takeOption(
  argv: readonly string[],
  name: string,
): { value: string | undefined; rest: string[] } {
  const rest: string[] = [];
  let value: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      rest.push(...argv.slice(i));
      break;
    }
    if (arg === name && i + 1 < argv.length) {
      value = argv[++i];
    } else if (arg.startsWith(`${name}=`)) {
      value = arg.slice(name.length + 1);
    } else {
      rest.push(arg);
    }
  }
  return { value, rest };
}
