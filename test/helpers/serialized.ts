import type { SerializedBody } from '../../src/toolkit/serialization.js';

/** What a serialized body holds, for a test that calls a service in its own process. */
export const parseSerialized = <T>(body: SerializedBody<T>): T => JSON.parse(body) as T;
