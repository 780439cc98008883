// One owner per table (docs/architecture.md, "Each table has one owner"): a feature names
// only its own tables in its queries, and asks the owner's public files for the rest.
import path from 'node:path';

/** Each table's owner: a feature folder, or the changelog layer. */
const OWNERS = {
  users: 'auth',
  tokens: 'auth',
  orgs: 'auth',
  memberships: 'auth',
  invites: 'accounts',
  oidc_logins: 'accounts',
  device_codes: 'oauth',
  idempotency_keys: 'idempotency',
  tasks: 'tasks',
  changes: 'changelog',
  calendar_feeds: 'calendar',
};
const ownerOf = (table) => OWNERS[table] ?? (/^sessions?_|^sessions$/.test(table) ? 'sessions' : /^webhooks?_|^webhooks$/.test(table) ? 'webhooks' : undefined);

/** The reads that cross, each for one statement's sake (docs/architecture.md says why): file → tables. */
const CROSSINGS = {
  'features/sessions/sessions.statements': ['users'],
  'features/sessions/sessions.writes': ['tasks'],
  'features/webhooks/webhooks.repository': ['memberships'],
};

const QUERY_METHODS = new Set(['selectFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto']);
const isTest = (file) => /\.test\.ts$|\.test-helpers\.ts$/.test(file);

const tableOwners = {
  meta: { type: 'problem', schema: [], docs: { description: 'a feature names only the tables it owns (docs/architecture.md)' } },
  create(context) {
    const file = context.filename;
    const rel = path.relative(path.join(context.cwd, 'src'), file).split(path.sep);
    // Storage (migrations, table types) and tests name every table; files outside src/ are not held.
    if (rel[0].startsWith('..') || rel[0] === 'storage' || isTest(file)) return {};
    const here = rel[0] === 'features' ? rel[1] : rel[0];
    const key = [...rel.slice(0, -1), path.basename(file).replace(/\.(js|ts)$/, '')].join('/');
    return {
      CallExpression(node) {
        const callee = node.callee;
        const arg = node.arguments[0];
        if (callee.type !== 'MemberExpression' || callee.property.type !== 'Identifier' || !QUERY_METHODS.has(callee.property.name)) return;
        if (arg?.type !== 'Literal' || typeof arg.value !== 'string') return;
        const table = arg.value.split(/\s+as\s+/)[0].trim();
        const owner = ownerOf(table);
        if (owner === undefined || owner === here || (CROSSINGS[key] ?? []).includes(table)) return;
        context.report({ node: arg, message: `${table} is ${owner}'s table: ask ${owner}'s public files, not the table (docs/architecture.md, "Each table has one owner")` });
      },
    };
  },
};

export default { rules: { 'table-owners': tableOwners } };
