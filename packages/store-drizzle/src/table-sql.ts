import { getTableColumns, getTableName } from "drizzle-orm";
import type { PgColumn, PgTable } from "drizzle-orm/pg-core";

/**
 * A drizzle table's names, types and value mappings, for statements written once as text (see SqlRunner): the
 * column list a select answers in drizzle's keys, parameters cast to each column's type, and values mapped to
 * and from the driver as drizzle maps them (jsonb as JSON text, timestamps as ISO text or `Date`s).
 */
export class TableSql<Table extends PgTable> {
  /** The table's quoted name (unqualified: the connection's `search_path` is the store's schema). */
  readonly name: string;
  /** Every column as `"column_name" as "key"`, for a select whose rows `decode` reads. */
  readonly selectList: string;
  readonly #columns: Record<string, PgColumn>;

  constructor(table: Table) {
    this.name = quote(getTableName(table));
    this.#columns = getTableColumns(table);
    this.selectList = this.selectListAs("");
  }

  /**
   * Every column as `"column_name" as "<prefix>key"`: for a row holding two tables' columns, which
   * `decode(row, prefix)` reads.
   */
  selectListAs(prefix: string): string {
    return Object.entries(this.#columns)
      .map(([key, column]) => `${quote(column.name)} as ${quote(prefix + key)}`)
      .join(", ");
  }

  /** The quoted column name of `key`. */
  column(key: keyof Table["$inferSelect"] & string): string {
    return quote(this.#column(key).name);
  }

  /** Parameter `$n` cast to the column's type; jsonb goes as text, so no driver serializes it a second time. */
  param(key: keyof Table["$inferSelect"] & string, n: number): string {
    const type = this.#column(key).getSQLType();
    return type === "jsonb" ? `$${n}::text::jsonb` : `$${n}::${type}`;
  }

  /**
   * `insert into` the columns `keys`, as parameters `$1…` in that order (a `select` of them), then `tail`
   * (`where …`, `on conflict …`).
   */
  insert(keys: readonly (keyof Table["$inferSelect"] & string)[], tail = ""): string {
    const columns = keys.map((key) => this.column(key)).join(", ");
    const params = keys.map((key, index) => this.param(key, index + 1)).join(", ");
    return `insert into ${this.name} (${columns}) select ${params} ${tail}`.trim();
  }

  /** `(col, …) is not distinct from ($first, …)`: the columns `keys` equal parameters, nulls included. */
  equal(keys: readonly (keyof Table["$inferSelect"] & string)[], first: number): string {
    const columns = keys.map((key) => this.column(key)).join(", ");
    const params = keys.map((key, index) => this.param(key, first + index)).join(", ");
    return `(${columns}) is not distinct from (${params})`;
  }

  /** `col = $n, …` for the columns `keys`, as parameters `$first…` in that order. */
  assignments(keys: readonly (keyof Table["$inferSelect"] & string)[], first: number): string {
    return keys.map((key, index) => `${this.column(key)} = ${this.param(key, first + index)}`).join(", ");
  }

  /** `value` as the driver is sent it for column `key`. */
  encode(key: keyof Table["$inferSelect"] & string, value: unknown): unknown {
    return value === null || value === undefined ? null : this.#column(key).mapToDriverValue(value);
  }

  /** A row of a select on `selectList` (or `selectListAs(prefix)`), with drizzle's types. */
  decode(row: Record<string, unknown>, prefix = ""): Table["$inferSelect"] {
    const decoded: Record<string, unknown> = {};
    for (const [key, column] of Object.entries(this.#columns)) {
      const value = row[prefix + key];
      decoded[key] = value === null || value === undefined ? null : column.mapFromDriverValue(value);
    }
    return decoded as Table["$inferSelect"];
  }

  #column(key: string): PgColumn {
    const column = this.#columns[key];
    if (column === undefined) throw new Error(`Table ${this.name} has no column ${key}.`);
    return column;
  }
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
