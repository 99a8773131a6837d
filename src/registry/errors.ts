import { TroupeError } from '../core/errors.js';

/** A registry that cannot be reached, read or written: git failed on it, or its files are malformed. */
export class RegistryError extends TroupeError {
  readonly code = 'registry_error';
}

/**
 * Content that does not match the hash recorded for it: an installed file changed since the lock
 * was written, or a registry's files changed under a version already published.
 */
export class IntegrityError extends TroupeError {
  readonly code = 'integrity_error';
}
