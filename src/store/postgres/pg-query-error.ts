export interface PgFailure {
  message: string;
  /** PostgreSQL's SQLSTATE, or Node's error code (ECONNREFUSED, …) */
  code?: string;
}

/** An error PostgreSQL (or the connection to it) answered, with its code. */
export class PgQueryError extends Error {
  readonly code: string | undefined;
  constructor(failure: PgFailure) {
    super(failure.message);
    this.code = failure.code;
  }
}
