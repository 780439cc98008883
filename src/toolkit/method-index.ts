/**
 * Remembers every route's path pattern so that a request for a known path with
 * the wrong method answers 405 with `Allow` instead of 404.
 */
export class MethodIndex {
  private readonly routes: { pattern: RegExp; methods: Set<string> }[] = [];
  private readonly byUrl = new Map<string, Set<string>>();

  add(url: string, methods: string | string[]): void {
    let set = this.byUrl.get(url);
    if (set === undefined) {
      set = new Set();
      this.byUrl.set(url, set);
      const source = url.replace(/[.*+?^${}()|[\]\\]/g, '\\$&').replace(/:[A-Za-z0-9_]+/g, '[^/]+');
      this.routes.push({ pattern: new RegExp(`^${source}/?$`), methods: set });
    }
    for (const m of [methods].flat()) if (m !== 'HEAD') set.add(m);
  }

  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) for (const m of r.methods) out.add(m);
    return [...out].sort();
  }
}
