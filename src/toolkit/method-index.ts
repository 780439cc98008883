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

  /**
   * The methods of a route whose path is exactly `path`, without parameters: `GET /tasks/bulk`
   * matches `GET /tasks/:id` with an id that cannot exist, but the path is `POST /tasks/bulk`'s.
   */
  exact(path: string): string[] {
    const trimmed = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : path;
    return trimmed.includes(':') ? [] : [...(this.byUrl.get(trimmed) ?? [])].sort();
  }

  allowed(path: string): string[] {
    const out = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) for (const m of r.methods) out.add(m);
    return [...out].sort();
  }
}
