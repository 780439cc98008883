/** How long a keyword found common is searched without asking the substring index again. */
export const COMMON_KEYWORD_TTL_MS = 60_000;
/** Verdicts remembered at most: the memo's memory stays bounded whatever people type. */
export const COMMON_KEYWORDS_KEPT = 1_000;

/**
 * Keywords a user searched that the substring index found in more than MAX_NAMED_SESSIONS
 * names. For those a listing tests each row it reads, and asking the index first only
 * costs time (a fifth of a common-keyword page at scale 0.25: docs/performance.md), on
 * every page of the search.
 *
 * Only the verdict "common" is kept, never ids: testing rows is correct for any keyword, so
 * a verdict gone stale (the word got rare) slows a listing until it expires but never
 * changes what it shows. Kept per user (the caller's key), so that how fast a search runs
 * never tells what someone else searched. Per process; another instance keeps its own.
 */
export class CommonKeywords {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs = COMMON_KEYWORD_TTL_MS,
    private readonly kept = COMMON_KEYWORDS_KEPT,
  ) {}

  has(key: string, nowMs = Date.now()): boolean {
    const until = this.until.get(key);
    if (until === undefined) return false;
    if (until > nowMs) return true;
    this.until.delete(key);
    return false;
  }

  add(key: string, nowMs = Date.now()): void {
    this.until.delete(key);
    // A Map iterates in insertion order: the first key is the oldest verdict.
    if (this.until.size >= this.kept) this.until.delete(this.until.keys().next().value as string);
    this.until.set(key, nowMs + this.ttlMs);
  }
}
