// The layer rule of docs/architecture.md, checked on every relative import in src/ (tests
// and test helpers aside: they may reach anywhere they need to set a scene up).
import path from 'node:path';

/** Imports run downward only: a layer imports its own and lower ones. */
const LAYERS = ['domain', 'storage', 'toolkit', 'changelog', 'features', 'app', 'server', 'cli'];
/** Beside the stack: the environment, read by the CLI, the server and the app only. */
const CONFIG_READERS = new Set(['config', 'app', 'server', 'cli']);

/**
 * Features in the order they may use each other: one imports only features before it, so
 * no two feature folders import each other. The recurrence engine imports nothing outside
 * its folder at all.
 */
const FEATURES = ['recurrence', 'blocker', 'idempotency', 'system', 'auth', 'accounts', 'oauth', 'sessions', 'tasks', 'changes', 'events', 'calendar', 'now', 'stats', 'webhooks'];
const SELF_CONTAINED = new Set(['recurrence']);

/**
 * The files another feature may import from each feature: its public face. A feature's
 * `<feature>.api.ts` and `<feature>.schema.ts` always are; the rest is today's surface,
 * listed so that it only shrinks (issue 35: sessions.api.ts becomes sessions' one face).
 */
const PUBLIC = {
  auth: ['auth.caller', 'auth.service', 'auth.token', 'auth.principals', 'auth.people'],
  accounts: ['accounts.public'],
  blocker: ['blocker.categories'],
  changes: ['changes.service'],
  recurrence: ['recurrence.engine', 'recurrence.dates', 'recurrence.time', 'recurrence.rrule'],
  sessions: ['sessions.route-schema', 'sessions.blocker-schema'],
  tasks: ['tasks.model', 'tasks.service', 'tasks.completions'],
};

export const isTest = (file) => /\.test\.ts$|\.test-helpers\.ts$/.test(file);

/** Where a file of src/ sits: its layer, and its feature when it is in one. */
export function placeOf(srcRoot, file) {
  const parts = path.relative(srcRoot, file).split(path.sep);
  if (parts[0].startsWith('..')) return undefined;
  if (parts.length === 1) return { layer: parts[0].startsWith('server') ? 'server' : parts[0].replace(/\.ts$/, '') };
  return { layer: parts[0], feature: parts[0] === 'features' ? parts[1] : undefined, name: path.basename(file).replace(/\.(js|ts)$/, '') };
}

function verdict(from, to) {
  if (from.feature !== undefined && SELF_CONTAINED.has(from.feature) && to.feature !== from.feature) {
    return `${from.feature} imports nothing outside its folder`;
  }
  if (to.layer === 'config' || from.layer === 'config') {
    return to.layer === 'config' && !CONFIG_READERS.has(from.layer) ? `only the CLI, the server and the app read config/` : undefined;
  }
  const [a, b] = [LAYERS.indexOf(from.layer), LAYERS.indexOf(to.layer)];
  if (a >= 0 && b > a) return `${from.layer}/ imports nothing from ${to.layer}/, a layer above it`;
  if (from.feature === undefined || to.feature === undefined || from.feature === to.feature) return undefined;
  if (FEATURES.indexOf(to.feature) >= FEATURES.indexOf(from.feature)) return `features/${from.feature} may not import features/${to.feature} (features use only those before them: eslint/layers.js)`;
  const open = [`${to.feature}.api`, `${to.feature}.schema`, ...(PUBLIC[to.feature] ?? [])];
  return open.includes(to.name) ? undefined : `features/${to.feature} is used through its public files (${open.join(', ')}), not ${to.name}`;
}

const layers = {
  meta: { type: 'problem', schema: [], docs: { description: 'imports follow the layers and feature order of docs/architecture.md' } },
  create(context) {
    const file = context.filename;
    const srcRoot = path.join(context.cwd, 'src');
    const from = placeOf(srcRoot, file);
    if (from === undefined || isTest(file)) return {};
    const check = (node) => {
      const source = node.source;
      if (source?.type !== 'Literal' || typeof source.value !== 'string' || !source.value.startsWith('.')) return;
      const to = placeOf(srcRoot, path.resolve(path.dirname(file), source.value));
      const message = to && verdict(from, to);
      if (message) context.report({ node: source, message });
    };
    return { ImportDeclaration: check, ExportNamedDeclaration: check, ExportAllDeclaration: check, ImportExpression: check };
  },
};

export default { rules: { layers } };
