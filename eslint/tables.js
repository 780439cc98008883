// One owner per table (docs/architecture.md, "Each table has one owner"): a feature names
// only its own tables in its queries, and asks the owner's public files for the rest.
import path from 'node:path';
import { isTest, placeOf } from './layers.js';

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
  'sessions.statements': ['users'],
  'sessions.writes': ['tasks'],
  'webhooks.repository': ['memberships'],
};

const QUERY_METHODS = new Set(['selectFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'insertInto', 'updateTable', 'deleteFrom', 'replaceInto', 'mergeInto']);

const tableOwners = {
  meta: { type: 'problem', schema: [], docs: { description: 'a feature names only the tables it owns (docs/architecture.md)' } },
  create(context) {
    const file = context.filename;
    const place = placeOf(path.join(context.cwd, 'src'), file);
    // Storage (migrations, table types) and tests name every table; files outside src/ are not held.
    if (place === undefined || place.layer === 'storage' || isTest(file)) return {};
    const here = place.feature ?? place.layer;
    const crossings = place.feature === undefined ? [] : (CROSSINGS[place.name] ?? []);
    return {
      CallExpression(node) {
        const callee = node.callee;
        const arg = node.arguments[0];
        if (callee.type !== 'MemberExpression' || callee.property.type !== 'Identifier' || !QUERY_METHODS.has(callee.property.name)) return;
        if (arg?.type !== 'Literal' || typeof arg.value !== 'string') return;
        const table = arg.value.split(/\s+as\s+/)[0].trim();
        const owner = ownerOf(table);
        if (owner === undefined || owner === here || crossings.includes(table)) return;
        context.report({ node: arg, message: `${table} is ${owner}'s table: ask ${owner}'s public files, not the table (docs/architecture.md, "Each table has one owner")` });
      },
    };
  },
};

export default { rules: { 'table-owners': tableOwners } };
