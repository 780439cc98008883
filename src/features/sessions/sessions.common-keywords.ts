/** How long a keyword found common is searched without asking the substring index again. */
export const COMMON_KEYWORD_TTL_MS = 60_000;
/** Keywords remembered at most: the memo's memory stays bounded whatever people type. */
export const COMMON_KEYWORDS_KEPT = 1_000;

/**
 * Keywords the substring index recently found in more than MAX_NAMED_SESSIONS names. For
 * those a listing tests each row it reads, and asking the index first only costs time
 * (most of a common-keyword page at scale 1: docs/performance.md). Every page of such a
 * search, and every user typing the same word, asked it again.
 *
 * Only the verdict "common" is kept, never ids: testing rows is correct for any keyword, so
 * a verdict gone stale (the word got rare) slows a listing until it expires but never
 * changes what it shows. Per process; another instance keeps its own.
 */
export class CommonKeywords {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs = COMMON_KEYWORD_TTL_MS,
    private readonly kept = COMMON_KEYWORDS_KEPT,
  ) {}

  has(keyword: string, nowMs = Date.now()): boolean {
    const until = this.until.get(keyword);
    if (until === undefined) return false;
    if (until > nowMs) return true;
    this.until.delete(keyword);
    return false;
  }

  add(keyword: string, nowMs = Date.now()): void {
    this.until.delete(keyword);
    // A Map iterates in insertion order: the first key is the oldest verdict.
    if (this.until.size >= this.kept) this.until.delete(this.until.keys().next().value as string);
    this.until.set(keyword, nowMs + this.ttlMs);
  }
}
