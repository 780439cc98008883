/*
 * Storage failures every dialect translates its driver errors into, so that the
 * HTTP layer never looks at SQLSTATEs or SQLite result codes.
 */

/** The database cannot serve right now (down, busy past the timeout, pool exhausted). Retry later. */
export class StorageUnavailableError extends Error {
  override name = 'StorageUnavailableError';
}

/** A write hit a unique constraint. */
export class UniqueViolationError extends Error {
  override name = 'UniqueViolationError';
  constructor(
    message: string,
    readonly constraint: string | undefined,
  ) {
    super(message);
  }
}

/** A transaction lost a serialization race or a deadlock; safe to retry the whole transaction. */
export class TransactionConflictError extends Error {
  override name = 'TransactionConflictError';
}

/** A referenced row does not exist (foreign key). */
export class ForeignKeyViolationError extends Error {
  override name = 'ForeignKeyViolationError';
}

export type StorageError =
  | StorageUnavailableError
  | UniqueViolationError
  | TransactionConflictError
  | ForeignKeyViolationError;
