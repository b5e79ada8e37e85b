import { z } from 'zod';

const columnList = z.array(z.string().min(1)).min(1);

/**
 * `warn`: offending rows are reported as a warning (status `warned`, with their count)
 * and do not fail the build or the run; for facts that must be seen but must not stop a
 * night, such as a SERP item type never seen before.
 */
const severity = z
  .enum(['error', 'warn'])
  .optional()
  .describe('error (default): offending rows fail the test; warn: they are reported as a warning');

/** One test of a sidecar; each kind becomes one query that returns the offending rows. */
export const modelTestSchema = z.union([
  z.object({ unique: columnList, severity }).strict().describe('no two rows share these columns'),
  z.object({ not_null: columnList, severity }).strict().describe('none of these columns is null'),
  z
    .object({
      accepted_values: z.object({ column: z.string(), values: z.array(z.union([z.string(), z.number(), z.boolean()])).min(1) }).strict(),
      severity,
    })
    .strict()
    .describe('every non-null value of the column is one of these'),
  z
    .object({ relationships: z.object({ column: z.string(), to: z.string(), field: z.string() }).strict(), severity })
    .strict()
    .describe('every non-null value of the column exists in to.field'),
  z
    .object({ expression: z.string().min(1), name: z.string().optional(), severity })
    .strict()
    .describe('a boolean SQL expression that must hold for every row'),
]);
export type ModelTest = z.infer<typeof modelTestSchema>;

/** One column of a model, as docs/schema.md shows it. */
export const columnDocSchema = z
  .object({
    type: z.string().min(1).describe('the DuckDB type the model builds, e.g. DATE, VARCHAR, DECIMAL(18,6)'),
    description: z.string().min(1).describe('what the column holds, for a BI reader'),
    unit: z.string().min(1).optional().describe("what a number counts or measures: 'CNY', 'days', 'fraction 0-1 (0.26 = 26%)', 'keywords'"),
    deprecated: z.string().min(1).optional().describe('the column kept for older readers: what to read instead'),
  })
  .strict();
export type ColumnDoc = z.infer<typeof columnDocSchema>;

/**
 * The sidecar next to a model (`rank_history.yml` beside `rank_history.sql`): what one row
 * is, how it is materialized and which tests must hold. Kept as data so `models test`
 * and the docs read the same file.
 */
export const sidecarSchema = z
  .object({
    grain: z.string().min(1).describe('what one row is, e.g. "one row per keyword, domain and day"'),
    description: z.string().optional(),
    materialized: z
      .enum(['view', 'table', 'incremental'])
      .optional()
      .describe('default: view under staging/ and intermediate/, table elsewhere'),
    incremental: z
      .object({
        key: z.string().min(1).describe('date column; rows from the last built value on are rebuilt'),
        full_refresh_on: z
          .array(z.string().min(1))
          .optional()
          .describe(
            'relations the model reads whose change (any row) rebuilds it in full, e.g. a list of tracked domains that flags every row',
          ),
        strategy: z
          .enum(['temp', 'delete_insert'])
          .optional()
          .describe(
            "how the rebuilt rows replace the old: 'temp' (default) builds them into a temp table, then deletes the rows from the rebuild's start and inserts the temp table; 'delete_insert' deletes first and inserts straight from the model's SELECT, without the copy, for a model that reads its own table ({{ this }}) only before the rebuild's start, or not at all",
          ),
        watermark: z
          .object({ relation: z.string().min(1), column: z.string().min(1) })
          .strict()
          .optional()
          .describe(
            'where the next build starts when the key is not the date the inputs arrive by: the largest `column` of `relation` when the last build ran (kept in model_state), instead of the largest key in the table. E.g. first-seen dates, which stop moving once no new domain appears, watermarked by the check dates read',
          ),
      })
      .strict()
      .optional(),
    slices: z
      .object({
        count: z.number().int().min(2).max(64).describe('passes of a sliced build'),
        rows_of: z
          .string()
          .min(1)
          .optional()
          .describe(
            "a relation the model reads, directly or through its inputs, whose rows measure the build: it is sliced only when that holds more than `above` rows (for an incremental build, those from the rebuild's start by its key, which the relation must have)",
          ),
        above: z.number().int().min(0).optional().describe('rows of `rows_of` above which the build is sliced'),
      })
      .strict()
      .refine((o) => (o.rows_of === undefined) === (o.above === undefined), { message: 'rows_of and above go together' })
      .optional()
      .describe(
        'builds a table or incremental model in `count` passes, each over the rows its SQL keeps with `{{ in_slice(<columns>) }}` (a hash of those columns), all in one transaction: for a model whose memory grows with its rows (windows, joins) and whose rows of different slices never meet, e.g. rank_history, whose windows are per series (a 100,000-keyword night: 1,330 to 1,396 MB of peak RSS in one pass, 754 to 971 in four). With `rows_of` and `above`, only a build of more rows than that is sliced (each pass reads the inputs again: 1.2 million SERP items took a third longer in four passes)',
      ),
    date_key: z
      .string()
      .min(1)
      .optional()
      .describe(
        "date column of a view or table whose rows come from nightly loads (e.g. check_date): after a build whose incremental models all built incrementally, its tests read only rows from the earliest rebuilt date on, as the incremental models' own tests do; a full rebuild and `pipeline models test` test every row",
      ),
    partition_by: z
      .string()
      .min(1)
      .optional()
      .describe(
        "a mart's date column its published Parquet is partitioned by (`parquet/<mart>/date=<its UTC day>/`), so a night rewrites only the days it changed; without it the mart is published as one file set",
      ),
    sources: z
      .record(z.string(), z.array(z.string().min(1)))
      .optional()
      .describe('warehouse tables this model reads and the columns it expects; an absent table skips the model'),
    columns: z
      .record(z.string(), columnDocSchema)
      .optional()
      .describe(
        "each column of the model in its order: its type, what it holds and its unit (docs/schema.md is generated from these; a mart's columns must all be here)",
      ),
    tests: z.array(modelTestSchema).default([]),
  })
  .strict();
export type Sidecar = z.infer<typeof sidecarSchema>;
