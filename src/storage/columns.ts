/*
 * How columns encode values: flags, JSON text and folded search text. The values
 * themselves (statuses, types, actions) are the domain's vocabulary (domain/vocabulary.ts).
 */

export type Flag = 0 | 1;

declare const jsonOf: unique symbol;
/** JSON text holding a T: written only by toJson, read only by parseJson. */
export type JsonText<T> = string & { readonly [jsonOf]: T };

export const toJson = <T>(value: T): JsonText<T> => JSON.stringify(value) as JsonText<T>;
export const parseJson = <T>(text: JsonText<T>): T => JSON.parse(text) as T;

/**
 * A session name as keyword search compares it: Unicode-aware case folding done here, in
 * JavaScript, so that both databases compare the same text (SQLite's own folding covers
 * ASCII only; PostgreSQL's depends on the database's locale). Upper-then-lower also folds
 * `ß` to `ss`, as full case folding does.
 */
export const foldForSearch = (text: string): string => text.normalize('NFC').toUpperCase().toLowerCase();

