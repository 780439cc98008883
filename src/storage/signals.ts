import { type Kysely, sql } from 'kysely';
import pg from 'pg';
import type { Database } from './tables.js';

/**
 * Small notices between the processes that share a database ("token 7 was revoked"), so
 * that a process may cache what the notice guards. Neutral on purpose: a feature publishes
 * and subscribes by channel name and never learns how the notice travels.
 */
export interface Signals {
  /**
   * Announces a write to every process on this database: publish in the transaction of
   * the write (`db` a Trx) or right after it. Inside a transaction the signal leaves at
   * commit, and not at all on rollback.
   */
  publish(db: Kysely<Database>, channel: string, payload?: string): Promise<void>;
  /**
   * Calls `onSignal` for each signal on `channel` (PostgreSQL: from any process; SQLite:
   * from this one only; see `version` for the rest). Returns the unsubscribe function.
   */
  subscribe(channel: string, onSignal: (payload: string) => void): () => void;
  /**
   * An opaque value that differs whenever a signal on `channel` may have been published
   * since it was last read, by this process or any other; undefined when that cannot be
   * told right now (the listening connection is down or not yet listening), and then
   * nothing guarded by the channel may be served from a cache. Read it before the data.
   * The first call starts listening.
   */
  version(channel: string): string | undefined;
  close(): Promise<void>;
}

/** One process's subscribers per channel, and a counter that moves with every local publish. */
class LocalChannels {
  private readonly subscribers = new Map<string, Set<(payload: string) => void>>();

  subscribe(channel: string, onSignal: (payload: string) => void): () => void {
    let set = this.subscribers.get(channel);
    if (set === undefined) this.subscribers.set(channel, (set = new Set()));
    set.add(onSignal);
    return () => set.delete(onSignal);
  }

  deliver(channel: string, payload: string): void {
    for (const fn of this.subscribers.get(channel) ?? []) {
      try {
        fn(payload);
      } catch {
        // One subscriber's failure must not keep the signal from the others.
      }
    }
  }

  channels(): string[] {
    return [...this.subscribers.keys()];
  }
}

/**
 * SQLite: processes sharing the file cannot signal each other, but every commit by any of
 * them moves the file's data version, which is a cheap synchronous read. So `version` is
 * the data version (plus this process's publishes): coarser than a channel (any write
 * moves it), never staler, and it is why a signal must accompany a write.
 */
export function sqliteSignals(dataVersion: () => string): Signals {
  const local = new LocalChannels();
  let published = 0;
  return {
    publish(_db, channel, payload = '') {
      published++;
      local.deliver(channel, payload);
      return Promise.resolve();
    },
    subscribe: (channel, onSignal) => local.subscribe(channel, onSignal),
    version: () => `${dataVersion()}:${published}`,
    close: () => Promise.resolve(),
  };
}

/*
 * The PostgreSQL channel of a signal channel: per schema, so that databases sharing a
 * server stay apart, and always a short identifier. Computed by the server, in the same
 * words in both places below, so publisher and listener agree on current_schema().
 */
const LISTEN_NAME = "select 'focus_' || left(md5(current_schema() || ':' || $1), 24) as name";

const RECONNECT_MIN_MS = 100;
const RECONNECT_MAX_MS = 5_000;

export interface PostgresSignalsOptions {
  connectTimeoutMs: number;
  onError: (error: Error) => void;
}

/**
 * PostgreSQL: `pg_notify` in the publishing statement (so a transaction's signal leaves at
 * its commit) and one dedicated connection per process that LISTENs, opened on the first
 * `version` or `subscribe` (a CLI command that only publishes never opens it). While that
 * connection is down, or a channel's LISTEN is not yet confirmed, `version` is undefined;
 * each reconnect moves every version, since signals may have been missed meanwhile.
 */
export function postgresSignals(url: string, options: PostgresSignalsOptions): Signals {
  const listener = new PostgresListener(url, options);
  return {
    async publish(db, channel, payload = '') {
      await sql`select pg_notify('focus_' || left(md5(current_schema() || ':' || ${channel}), 24), ${payload})`.execute(db);
      // This process need not wait for its own notice to come back: anything cached here before now is stale.
      listener.moved(channel);
    },
    subscribe(channel, onSignal) {
      listener.watch(channel);
      return listener.local.subscribe(channel, onSignal);
    },
    version(channel) {
      const s = listener.watch(channel);
      return s.listening ? String(s.generation) : undefined;
    },
    close: () => listener.close(),
  };
}

/** A channel as the listening connection knows it: a counter moved by every signal, and whether its LISTEN is confirmed. */
interface ChannelState {
  generation: number;
  listening: boolean;
  name?: string;
}

/** The dedicated LISTEN connection of postgresSignals, reconnecting with backoff. */
class PostgresListener {
  readonly local = new LocalChannels();
  private readonly state = new Map<string, ChannelState>();
  private readonly byName = new Map<string, string>();
  private client: pg.Client | undefined;
  private connecting: Promise<void> | undefined;
  private closed = false;
  private retryMs = RECONNECT_MIN_MS;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly options: PostgresSignalsOptions,
  ) {}

  private stateOf(channel: string): ChannelState {
    let s = this.state.get(channel);
    if (s === undefined) this.state.set(channel, (s = { generation: 0, listening: false }));
    return s;
  }

  /** A signal of this process's own: moves the channel's version at once. */
  moved(channel: string): void {
    const s = this.state.get(channel);
    if (s !== undefined) s.generation++;
  }

  private async listen(c: pg.Client, channel: string): Promise<void> {
    const s = this.stateOf(channel);
    if (s.name === undefined) {
      const { rows } = await c.query<{ name: string }>(LISTEN_NAME, [channel]);
      const name = rows[0]?.name;
      if (name === undefined) throw new Error('no channel name');
      s.name = name;
      this.byName.set(name, channel);
    }
    await c.query(`listen ${c.escapeIdentifier(s.name)}`);
    if (this.client === c) s.listening = true;
  }

  private drop(c: pg.Client, error?: Error): void {
    if (this.client !== c) return;
    this.client = undefined;
    for (const s of this.state.values()) {
      s.listening = false;
      s.generation++;
    }
    if (error !== undefined) this.options.onError(error);
    c.end().catch(() => undefined);
    this.scheduleReconnect();
  }

  private scheduleReconnect(): void {
    if (this.closed || this.retryTimer !== undefined) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.ensureConnected();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(this.retryMs * 2, RECONNECT_MAX_MS);
  }

  private ensureConnected(): void {
    if (this.closed || this.client !== undefined || this.connecting !== undefined) return;
    const c = new pg.Client({
      connectionString: this.url,
      connectionTimeoutMillis: this.options.connectTimeoutMs,
      keepAlive: true,
      keepAliveInitialDelayMillis: 10_000,
      application_name: 'focus-signals',
    });
    c.on('error', (error) => this.drop(c, error));
    c.on('end', () => this.drop(c));
    c.on('notification', (message) => {
      const channel = this.byName.get(message.channel);
      if (channel === undefined) return;
      this.stateOf(channel).generation++;
      this.local.deliver(channel, message.payload ?? '');
    });
    this.connecting = this.connect(c).finally(() => (this.connecting = undefined));
  }

  private async connect(c: pg.Client): Promise<void> {
    try {
      await c.connect();
      if (this.closed) {
        await c.end();
        return;
      }
      this.client = c;
      for (const channel of this.state.keys()) await this.listen(c, channel);
      this.retryMs = RECONNECT_MIN_MS;
    } catch (error) {
      if (this.client === c) this.drop(c, error as Error);
      else {
        c.end().catch(() => undefined);
        if (!this.closed) this.options.onError(error as Error);
        this.scheduleReconnect();
      }
    }
  }

  /** The channel's state, listening for it from now on (connecting first if need be). */
  watch(channel: string): ChannelState {
    const known = this.state.has(channel);
    const s = this.stateOf(channel);
    const client = this.client;
    if (!known && client !== undefined && this.connecting === undefined) {
      this.listen(client, channel).catch((error: unknown) => {
        if (this.client !== undefined) this.drop(this.client, error as Error);
      });
    }
    this.ensureConnected();
    return s;
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.retryTimer !== undefined) clearTimeout(this.retryTimer);
    // A connection still being made ends itself when it completes (see connect): shutdown does not wait for an unreachable server.
    const c = this.client;
    this.client = undefined;
    await c?.end().catch(() => undefined);
  }
}
