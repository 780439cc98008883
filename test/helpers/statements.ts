import {
  type CompiledQuery,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryId,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  createQueryId,
} from 'kysely';
import type { Db } from '../../src/storage/database.js';

/**
 * A Kysely plugin that keeps every statement executed through it (pass it in
 * StorageHooks.plugins). Kysely also hands a plugin each subquery as it is built into a
 * larger statement; those never run alone, so only a node whose result came back counts:
 * the last one seen under the query id of that result.
 */
export class StatementCapture implements KyselyPlugin {
  readonly #latest = new Map<QueryId, RootOperationNode>();
  readonly nodes: RootOperationNode[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.#latest.set(args.queryId, args.node);
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    const node = this.#latest.get(args.queryId);
    if (node !== undefined) this.nodes.push(node);
    return Promise.resolve(args.result);
  }
  /** Forgets what was captured so far. */
  reset(): void {
    this.#latest.clear();
    this.nodes.length = 0;
  }
  /** The executed statements, in the order their results came back, as `db` compiles them (SQL and parameters). */
  compiled(db: Db): CompiledQuery[] {
    return this.nodes.map((node) => db.getExecutor().compileQuery(node, createQueryId()));
  }
}
