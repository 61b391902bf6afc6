/**
 * Which methods a path is served for, read from the express app's own routing table, so a 405's
 * `Allow` can never disagree with the routes: nothing lists methods by hand.
 *
 * Express 5 routes through the `router` package (2.x): a router's `stack` holds layers; a layer has
 * `match(path)` (returns the matched part, or false, without keeping state) and either a `route`
 * (with `methods`, a set of lower-case names) or a `handle` that may be a nested router with a
 * `stack` of its own. Only that much is read, through the guards below.
 */

interface MatchedLayer {
  match(path: string): { path: string } | false;
  route?: unknown;
  handle?: unknown;
}

export function servedMethods(router: unknown, path: string): string[] {
  const methods = new Set<string>();
  collect(router, path, methods);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

function collect(router: unknown, path: string, into: Set<string>): void {
  for (const layer of stackOf(router)) {
    const matched = layer.match(path);
    if (!matched) continue;
    const routeMethods = methodsOf(layer.route);
    if (routeMethods) {
      for (const method of routeMethods) into.add(method);
    } else if (stackOf(layer.handle).length > 0) {
      // A router mounted under a prefix sees the path without it.
      collect(layer.handle, path.slice(matched.path.length) || '/', into);
    }
  }
}

function stackOf(router: unknown): MatchedLayer[] {
  if ((typeof router !== 'function' && typeof router !== 'object') || router === null || !('stack' in router)) return [];
  const stack: unknown = router.stack;
  return Array.isArray(stack) ? stack.filter(isLayer) : [];
}

function isLayer(value: unknown): value is MatchedLayer {
  return typeof value === 'object' && value !== null && 'match' in value && typeof value.match === 'function';
}

/** The methods of a route layer (`_all` is express's `.all()`, which serves every method: no 405 there). */
function methodsOf(route: unknown): string[] | undefined {
  if (typeof route !== 'object' || route === null || !('methods' in route)) return undefined;
  const methods: unknown = route.methods;
  if (typeof methods !== 'object' || methods === null) return undefined;
  return Object.keys(methods)
    .filter((name) => name !== '_all')
    .map((name) => name.toUpperCase());
}
