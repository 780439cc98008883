import { createHash } from 'node:crypto';
import { type Compilable, type CompiledQuery, createQueryId } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Db } from './tables.js';

/**
 * Statements built once per shape. Kysely builds and compiles a query anew on every call:
 * for a listing's five statements that was a quarter of the call (docs/performance.md,
 * "Statements built once per shape"). A prepared query builds its statement once for each
 * shape of its arguments, with a stand-in (a Slot) at every argument that only ever becomes
 * a parameter, and afterwards only puts the arguments where their stand-ins were.
 *
 * The shape is everything else: which optional arguments are there, how long each list of
 * parameters is, and the value of every argument not declared a parameter (a filter that
 * picks a comparison, say). So an argument a builder branches on is in the key unless it is
 * declared a parameter by mistake; then the builder sees a Slot, which refuses to become a
 * string or a number (JSON, `+`, `<`, a template), and a statement built from it differs
 * from the real one: both are checked when a shape is first seen, and a shape whose
 * statements differ is never reused.
 */

/** The stand-in of the argument at `path` while a shape's statement is built. */
class Slot {
  constructor(readonly path: string) {}
  [Symbol.toPrimitive](): never {
    throw new Error(`prepared query: the parameter ${this.path} was used as a value while building`);
  }
  toJSON(): never {
    throw new Error(`prepared query: the parameter ${this.path} was used as a value while building`);
  }
}

/** What may be a parameter: a string or a number, or a list of them (one parameter each). */
type Slottable = string | number | bigint | readonly (string | number | bigint)[];

/**
 * The dotted paths (`a.b`) of `A`'s strings, numbers and lists of them: a parameter path
 * that names nothing in the arguments' type, a typo, fails to compile. Undeclared, such an
 * argument would stay in the shape, and each of its values would build a new statement.
 */
export type ParamPath<A> = {
  [K in keyof A & string]-?: NonNullable<A[K]> extends Slottable ? K : NonNullable<A[K]> extends object ? `${K}.${ParamPath<NonNullable<A[K]>>}` : never;
}[keyof A & string];

type Parameter = { kind: 'fixed'; value: unknown } | { kind: 'slot'; path: string } | { kind: 'list'; paths: string[] };

/** A shape's statement: its SQL, and where each parameter comes from. */
interface Shape {
  sql: string;
  query: CompiledQuery['query'];
  parameters: Parameter[];
}

/** Marks a shape whose statement could not be reused: it is built every time. */
const UNPREPARABLE = Symbol('unpreparable');

export interface PreparedQuery<A, R> {
  execute(db: Db, args: A): Promise<R[]>;
  /** The statement `execute` runs for `args`, and whether it came from a shape built before. */
  compile(db: Db, args: A): { query: CompiledQuery<R>; reused: boolean };
}

let reuses = 0;
/** How many statements this process ran from a shape built before: what tests read to know the reuse happened. */
export const preparedReuses = (): number => reuses;

/** Shapes kept per prepared query; the least recently used goes first. */
const SHAPES = 256;

/**
 * The SQL of the shapes built lately by prepared queries marked `named`, with the name
 * PostgreSQL keeps each prepared by (postgres.named.ts), hashed once per text.
 */
const preparedTexts = new LRUCache<string, string>({ max: 2_048 });
/** The statement name of a named prepared query's SQL, or undefined for any other SQL. */
export const preparedName = (text: string): string | undefined => preparedTexts.get(text);
const markNamed = (text: string) => {
  if (preparedTexts.get(text) === undefined) preparedTexts.set(text, `focus_${createHash('sha1').update(text).digest('hex').slice(0, 24)}`);
};

/**
 * `params`: the paths (`a.b`) of the arguments that reach the statement only as parameters;
 * an array there stands for one parameter per element. `build` must be a function of its
 * arguments alone. A Kysely with plugins (the tests' statement capture) builds every time,
 * so that its plugins see each query.
 *
 * `named`: PostgreSQL may plan the statement once per connection for all arguments (a generic
 * plan). Only for statements whose generic plan was checked to stop at the page for any
 * reader (bench/issue36.ts prints it): `GET /tasks`' generic plan walked the primary key
 * instead of the owner's index, ten times the CPU of planning it anew.
 */
export function prepared<A extends object, R>(
  params: readonly ParamPath<A>[],
  build: (db: Db, args: A) => Compilable<R>,
  options: { named?: boolean } = {},
): PreparedQuery<A, R> {
  // Per database (a Kysely and its transactions share one adapter): each dialect compiles its own SQL.
  const byDatabase = new WeakMap<object, LRUCache<string, Shape | typeof UNPREPARABLE>>();
  const paramPaths = new Set<string>(params);

  function compile(db: Db, args: A): { query: CompiledQuery<R>; reused: boolean } {
    const executor = db.getExecutor();
    if (executor.plugins.length > 0) return { query: build(db, args).compile(), reused: false };
    let shapes = byDatabase.get(executor.adapter);
    if (shapes === undefined) byDatabase.set(executor.adapter, (shapes = new LRUCache<string, Shape | typeof UNPREPARABLE>({ max: SHAPES })));
    const values = new Map<string, unknown>();
    const key = keyOf(args, '', paramPaths, values);
    const shape = shapes.get(key);
    if (shape === UNPREPARABLE) return { query: build(db, args).compile(), reused: false };
    if (shape !== undefined) {
      reuses++;
      if (options.named === true) markNamed(shape.sql);
      const parameters = shape.parameters.map((p) => (p.kind === 'fixed' ? p.value : p.kind === 'slot' ? values.get(p.path) : p.paths.map((path) => values.get(path))));
      return { query: { sql: shape.sql, query: shape.query, parameters, queryId: createQueryId() }, reused: true };
    }
    const real = build(db, args).compile();
    shapes.set(key, shapeOf(db, args, paramPaths, build, real, values) ?? UNPREPARABLE);
    return { query: real, reused: false };
  }

  return {
    compile,
    async execute(db, args) {
      return (await db.executeQuery(compile(db, args).query)).rows;
    },
  };
}

/** Strings and numbers become parameters; null, booleans and undefined stay in the shape (a builder may test them). */
const slottable = (value: unknown): value is string | number | bigint => typeof value === 'string' || typeof value === 'number' || typeof value === 'bigint';
const isList = (value: unknown): value is unknown[] => Array.isArray(value) && value.every(slottable);

/**
 * The key of the arguments' shape; collects the value of each parameter by path. Objects
 * are walked in key order, so two argument objects built in different orders share a key.
 */
function keyOf(value: unknown, path: string, params: ReadonlySet<string>, values: Map<string, unknown>): string {
  if (params.has(path)) {
    if (isList(value)) {
      value.forEach((v, i) => values.set(`${path}.${i}`, v));
      return `[${value.length}]`;
    }
    if (slottable(value)) {
      values.set(path, value);
      return '?';
    }
  }
  if (value === undefined) return 'u';
  if (Array.isArray(value)) return `[${value.map((v, i) => keyOf(v, `${path}.${i}`, params, values)).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${keyOf((value as Record<string, unknown>)[k], path === '' ? k : `${path}.${k}`, params, values)}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'u';
}

/** The arguments with a Slot at each parameter. */
function withSlots(value: unknown, path: string, params: ReadonlySet<string>): unknown {
  if (params.has(path)) {
    if (isList(value)) return value.map((_, i) => new Slot(`${path}.${i}`));
    if (slottable(value)) return new Slot(path);
  }
  if (Array.isArray(value)) return value.map((v, i) => withSlots(v, `${path}.${i}`, params));
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, withSlots(v, path === '' ? k : `${path}.${k}`, params)]));
  }
  return value;
}

/**
 * Builds the shape's statement with Slots and checks it against the real one, `real`:
 * the same SQL, and the same parameters once the arguments are put in. Undefined (never
 * reused) when the builder used a parameter as a value, or the two differ.
 */
function shapeOf<A extends object, R>(
  db: Db,
  args: A,
  params: ReadonlySet<string>,
  build: (db: Db, args: A) => Compilable<R>,
  real: CompiledQuery<R>,
  values: ReadonlyMap<string, unknown>,
): Shape | undefined {
  let slotted: CompiledQuery<R>;
  try {
    slotted = build(db, withSlots(args, '', params) as A).compile();
  } catch {
    return undefined;
  }
  if (slotted.sql !== real.sql || slotted.parameters.length !== real.parameters.length) return undefined;
  const parameters: Parameter[] = slotted.parameters.map((p): Parameter => {
    if (p instanceof Slot) return { kind: 'slot', path: p.path };
    if (Array.isArray(p) && p.length > 0 && p.every((e) => e instanceof Slot)) return { kind: 'list', paths: p.map((e: Slot) => e.path) };
    return { kind: 'fixed', value: p };
  });
  const same = parameters.every((p, i) => {
    const actual = real.parameters[i];
    switch (p.kind) {
      case 'fixed':
        // A fixed parameter must not hold a Slot anywhere: it was made from one.
        return !containsSlot(p.value) && Object.is(p.value, actual);
      case 'slot':
        return Object.is(values.get(p.path), actual);
      case 'list':
        return Array.isArray(actual) && actual.length === p.paths.length && p.paths.every((path, j) => Object.is(values.get(path), actual[j]));
    }
  });
  // The tree built with Slots, not the real one: a shape keeps no caller's values.
  return same ? { sql: slotted.sql, query: slotted.query, parameters } : undefined;
}

const containsSlot = (value: unknown): boolean => value instanceof Slot || (Array.isArray(value) && value.some(containsSlot));
