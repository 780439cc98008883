import type { CompiledQuery, DatabaseConnection, Driver, QueryCompiler, QueryResult, TransactionSettings } from 'kysely';
import type { StorageError } from './storage.errors.js';

/** Turns a driver error into a storage error, or undefined to let it pass unchanged. */
export type ErrorTranslator = (error: unknown) => StorageError | undefined;

function rethrow(translate: ErrorTranslator, error: unknown): never {
  throw translate(error) ?? error;
}

/**
 * A connection whose failures leave it as storage errors: code above storage catches
 * `UniqueViolationError`, never a SQLSTATE or a SQLite result code.
 */
class TranslatingConnection implements DatabaseConnection {
  constructor(
    readonly inner: DatabaseConnection,
    private readonly translate: ErrorTranslator,
  ) {}

  async executeQuery<R>(compiledQuery: CompiledQuery): Promise<QueryResult<R>> {
    try {
      return await this.inner.executeQuery<R>(compiledQuery);
    } catch (error) {
      rethrow(this.translate, error);
    }
  }

  async *streamQuery<R>(compiledQuery: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    try {
      yield* this.inner.streamQuery<R>(compiledQuery, chunkSize);
    } catch (error) {
      rethrow(this.translate, error);
    }
  }
}

const innerOf = (connection: DatabaseConnection) => (connection as TranslatingConnection).inner;

/** Wraps a dialect's driver so that every statement, begin and commit translates its errors where it runs. */
export class TranslatingDriver implements Driver {
  constructor(
    private readonly inner: Driver,
    private readonly translate: ErrorTranslator,
  ) {}

  private async guard<T>(run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      rethrow(this.translate, error);
    }
  }

  init(): Promise<void> {
    return this.guard(() => this.inner.init());
  }

  async acquireConnection(): Promise<DatabaseConnection> {
    return new TranslatingConnection(await this.guard(() => this.inner.acquireConnection()), this.translate);
  }

  beginTransaction(connection: DatabaseConnection, settings: TransactionSettings): Promise<void> {
    return this.guard(() => this.inner.beginTransaction(innerOf(connection), settings));
  }

  commitTransaction(connection: DatabaseConnection): Promise<void> {
    return this.guard(() => this.inner.commitTransaction(innerOf(connection)));
  }

  rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    return this.guard(() => this.inner.rollbackTransaction(innerOf(connection)));
  }

  savepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.guard(() => this.required('savepoint').call(this.inner, innerOf(connection), name, compile));
  }

  rollbackToSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.guard(() => this.required('rollbackToSavepoint').call(this.inner, innerOf(connection), name, compile));
  }

  releaseSavepoint(connection: DatabaseConnection, name: string, compile: QueryCompiler['compileQuery']): Promise<void> {
    return this.guard(() => this.required('releaseSavepoint').call(this.inner, innerOf(connection), name, compile));
  }

  releaseConnection(connection: DatabaseConnection): Promise<void> {
    return this.inner.releaseConnection(innerOf(connection));
  }

  destroy(): Promise<void> {
    return this.inner.destroy();
  }

  private required<K extends 'savepoint' | 'rollbackToSavepoint' | 'releaseSavepoint'>(method: K): NonNullable<Driver[K]> {
    const fn = this.inner[method];
    if (fn === undefined) throw new Error(`the database driver has no ${method}`);
    return fn;
  }
}
