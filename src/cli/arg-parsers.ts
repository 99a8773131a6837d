import { InvalidArgumentError, Option } from 'commander';

/** An option's value that must be a whole number of at least `min` (`-n abc` is a usage error, exit 2). */
export function wholeNumber(min = 0): (text: string) => number {
  return (text) => {
    const n = Number(text);
    if (!/^\s*\d+\s*$/.test(text) || n < min)
      throw new InvalidArgumentError(`expects a whole number${min > 0 ? ` of at least ${min}` : ''}`);
    return n;
  };
}

/** `--format <format>` with its closed list: another value is a usage error naming the list. */
export function formatOption<F extends string>(formats: readonly F[], fallback: F): Option {
  return new Option('--format <format>', formats.join(' | ')).choices(formats).default(fallback);
}

/** `--queue <url>` of the commands that read or steer the work queue (queue, workers, worker drain|stop). */
export function queueAdminOption(): Option {
  return new Option('--queue <url>', "the queue's database (as for `troupe worker`)");
}
