// The Postgres store's table name, checked and quoted, and the names it derives from it (index, ordering table).
import { createHash } from 'node:crypto';
import { ConfigurationError } from '../src/errors.js';

const NAME = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;
const NAME_MAX = 63;

/** The names `tableNames` makes of one table: SQL text, each part checked and quoted. */
export interface TableNames {
  /** `"schema"."name"` or `"name"`, as every statement names the table. */
  readonly table: string;
  /** The index on `expires_at`. */
  readonly index: string;
  /** The ordering table, in the same schema. */
  readonly ordering: string;
  /**
   * The schema-qualified name that `CREATE TABLE` makes (an unqualified name goes to `current_schema()`), as a SQL
   * text expression: the migrate lock's key, which cannot be the table's oid before the table exists.
   */
  readonly created: string;
}

// A name the store makes from the table's (`<table>_expires_at`, `<table>_ordering`), within Postgres's 63
// characters. Up to 54 characters (the longest whose ordering table fitted before) it is the name the store always
// made, cut at 63 as Postgres cut it, so existing indexes and tables keep theirs; past that, a hash of the whole
// name after a cut keeps two long names apart.
function derivedName(name: string, suffix: string): string {
  if (name.length <= NAME_MAX - '_ordering'.length) return `${name}${suffix}`.slice(0, NAME_MAX);
  const hash = createHash('sha256').update(name).digest('hex').slice(0, 8);
  return `${name.slice(0, NAME_MAX - suffix.length - hash.length - 1)}_${hash}${suffix}`;
}

/**
 * `schema.table` or `table`, each part checked and quoted (the names go into SQL text, never as parameters), with
 * the names of its index and of its ordering table, in the same schema; throws a `ConfigurationError` otherwise.
 * @example
 * tableNames('app.webhook_events').table; // '"app"."webhook_events"'
 */
export function tableNames(table: string): TableNames {
  const parts = table.split('.');
  if (parts.length > 2 || !parts.every((part) => NAME.test(part)))
    throw new ConfigurationError(
      `Postgres store table must be a name or schema.name of letters, digits and underscores, at most 63 characters each, not ${JSON.stringify(table)}`,
    );
  const name = parts.at(-1)!;
  const schema = parts.length === 2 ? `"${parts[0]}".` : '';
  return {
    table: `${schema}"${name}"`,
    index: `"${derivedName(name, '_expires_at')}"`,
    ordering: `${schema}"${derivedName(name, '_ordering')}"`,
    // The checked names hold no quote, so they can sit in a string literal.
    created: parts.length === 2 ? `'${parts[0]}.${name}'` : `current_schema() || '.${name}'`,
  };
}
