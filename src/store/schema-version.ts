import { StoreTooNewError } from '../core/errors.js';
import { packageVersion } from '../package-root.js';

/** The troupe version that appends, recorded with each event (the `engine` column of both stores). */
export const engineVersion = (): string => packageVersion();

/**
 * Refuses a store whose schema is at `found`, past the last version this troupe knows (`known`):
 * a newer troupe migrated it, and this one would write what that schema may not expect.
 */
export function refuseNewerSchema(found: number, known: number, where: string): void {
  if (found <= known) return;
  throw new StoreTooNewError(
    `the store's schema is at version ${found}, newer than this troupe knows (${known}): upgrade troupe (this is ${engineVersion()}; ${where})`,
    {
      hint: 'install the troupe version that migrated it (docs/distributed.md, "Upgrading a fleet"); nothing was written',
    },
  );
}
