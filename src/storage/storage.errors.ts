/*
 * Storage failures every dialect translates its driver errors into, where the queries run
 * (see TranslatingDriver), so that nothing above storage looks at SQLSTATEs or SQLite
 * result codes. `code` keeps the driver's code for storage's own decisions and for logs;
 * `cause` is the driver error itself.
 */

abstract class StorageFailure extends Error {
  constructor(
    message: string,
    readonly code: string | undefined,
    cause: unknown,
  ) {
    super(message, { cause });
  }
}

/** The database cannot serve right now (down, busy past the timeout, pool exhausted). Retry later. */
export class StorageUnavailableError extends StorageFailure {
  override name = 'StorageUnavailableError';
}

/** A write hit a unique constraint (`constraint`: its name, where the driver tells). */
export class UniqueViolationError extends StorageFailure {
  override name = 'UniqueViolationError';
  constructor(
    message: string,
    code: string | undefined,
    cause: unknown,
    readonly constraint: string | undefined,
  ) {
    super(message, code, cause);
  }
}

/** A transaction lost a serialization race or a deadlock; safe to retry the whole transaction. */
export class TransactionConflictError extends StorageFailure {
  override name = 'TransactionConflictError';
}

/** A referenced row does not exist (foreign key). */
export class ForeignKeyViolationError extends StorageFailure {
  override name = 'ForeignKeyViolationError';
}

export type StorageError = StorageUnavailableError | UniqueViolationError | TransactionConflictError | ForeignKeyViolationError;
