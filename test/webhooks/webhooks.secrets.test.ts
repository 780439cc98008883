import { expect, it } from 'vitest';
import { createAuthService } from '../../src/features/auth/auth.service.js';
import { openStorage } from '../../src/storage/database.js';
import { createTestDatabase, describeEachDialect } from '../helpers/harness.js';
import { http } from '../helpers/http.js';
import { buildOnce, startServer } from '../helpers/server-process.js';
import { Receiver } from '../helpers/webhook-receiver.js';

/*
 * A webhook's secret is shown once, in the 201, and never written to a log line: a real
 * server at LOG_LEVEL=trace registers a webhook and delivers to a receiver that fails and
 * then succeeds; its stderr holds neither the secret nor a signature made with it.
 */

describeEachDialect('webhooks: secrets in logs', (dialect) => {
  it('never logs a webhook secret or signature, at trace level', async () => {
    await buildOnce();
    const database = await createTestDatabase(dialect);
    const storage = openStorage({ databaseUrl: database.url });
    await storage.migrate();
    const auth = createAuthService(storage);
    await auth.addUser('alice', [1]);
    const token = (await auth.issueToken('alice')).token;
    await storage.close();
    const receiver = await new Receiver().start();
    receiver.answer = (_r, i) => (i === 0 ? 500 : 200);
    const server = await startServer({ DATABASE_URL: database.url, LOG_LEVEL: 'trace', WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_RETRY_SCALE: '0.001' });
    let secret: string | undefined;
    try {
      const hook = await http(server.url, 'POST', '/api/v1/webhooks', token, { url: receiver.url, events: ['task.created'] });
      expect(hook.status).toBe(201);
      secret = (hook.body as { data: { secret: string } }).data.secret;
      const session = await http(server.url, 'POST', '/api/v1/sessions', token, { org_id: 1, name: 'S', type: 'standard', duration: 30, schedule: '2026-12-01', time: '9:00 AM' });
      await http(server.url, 'POST', '/api/v1/tasks', token, { context: 'Logged?', session_id: (session.body as { data: { id: number } }).data.id });
      await receiver.until((r) => r.length >= 2);
      await http(server.url, 'GET', '/api/v1/webhooks', token);
    } finally {
      await server.stop();
      await receiver.stop();
      await database.drop();
    }
    const logs = server.stderr();
    expect(logs).toContain('/api/v1/webhooks');
    if (secret === undefined) throw new Error('no webhook was created');
    expect(secret).toMatch(/^whsec_/);
    for (const part of [secret, secret.slice(6, 26), secret.slice(-20)]) expect(logs).not.toContain(part);
    for (const r of receiver.received) expect(logs).not.toContain(String(r.headers['webhook-signature']).slice(3));
  }, 90_000);
});
