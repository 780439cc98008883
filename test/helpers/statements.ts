import {
  type CompiledQuery,
  type KyselyPlugin,
  type PluginTransformQueryArgs,
  type PluginTransformResultArgs,
  type QueryResult,
  type RootOperationNode,
  type UnknownRow,
  createQueryId,
} from 'kysely';
import type { Db } from '../../src/storage/database.js';

/** A Kysely plugin that keeps every statement it sees (pass it in StorageHooks.plugins). */
export class StatementCapture implements KyselyPlugin {
  readonly nodes: RootOperationNode[] = [];
  transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
    this.nodes.push(args.node);
    return args.node;
  }
  transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
    return Promise.resolve(args.result);
  }
  /** The captured statements as `db` compiles them (SQL and parameters). */
  compiled(db: Db): CompiledQuery[] {
    return this.nodes.map((node) => db.getExecutor().compileQuery(node, createQueryId()));
  }
}
