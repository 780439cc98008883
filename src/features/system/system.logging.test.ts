import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../app/app.js';
import { type TestDatabase, createTestDatabase, testConfig } from '../../../test/helpers/harness.js';

/** An app whose log lines are collected, at the given level. */
async function appLoggingAt(database: TestDatabase, level: string) {
  const lines: { level: number; msg: string; reqId?: string }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(JSON.parse(line));
      done();
    },
  });
  const app = await buildApp({ config: testConfig(database.url), logger: { level, stream } });
  await app.ready();
  return { app, lines };
}

describe('health probes in the log', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase('sqlite');
  });
  afterAll(() => database?.drop());

  it('write nothing at info, while other requests still log their start and end', async () => {
    const { app, lines } = await appLoggingAt(database, 'info');
    try {
      for (const url of ['/healthz', '/readyz', '/healthz/', '/readyz?probe=lb']) {
        expect((await app.inject({ url, headers: { 'x-request-id': 'probe' } })).statusCode).toBe(200);
      }
      await app.inject({ url: '/api/v1/openapi.json', headers: { 'x-request-id': 'document' } });
      expect(lines.filter((l) => l.reqId === 'probe')).toEqual([]);
      expect(lines.filter((l) => l.reqId === 'document').map((l) => [l.level, l.msg])).toEqual([
        [30, 'incoming request'],
        [30, 'request completed'],
      ]);
    } finally {
      await app.close();
    }
  });

  it('log their start and end at debug', async () => {
    const { app, lines } = await appLoggingAt(database, 'debug');
    try {
      await app.inject({ url: '/readyz', headers: { 'x-request-id': 'probe' } });
      expect(lines.filter((l) => l.reqId === 'probe').map((l) => [l.level, l.msg])).toEqual([
        [20, 'incoming request'],
        [20, 'request completed'],
      ]);
    } finally {
      await app.close();
    }
  });
});
