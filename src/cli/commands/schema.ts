import { writeFile } from 'node:fs/promises';
import type { ArgumentsCamelCase, Argv, CommandModule } from 'yargs';
import { pathError } from '../../paths.js';
import { requireWarehouse } from './status.js';

interface SchemaArgs {
  write?: string;
  warehouse?: string;
}

/** `pipeline schema`: the generated schema reference, or the columns a warehouse has grown. */
export const schemaCommand: CommandModule<object, SchemaArgs> = {
  command: 'schema',
  describe: 'Print the schema reference of the warehouse tables (docs/schema.md), or with --warehouse the columns added from the data',
  builder: (y: Argv) =>
    y
      .option('write', { type: 'string', describe: 'write the reference to this file (docs/schema.md) instead of stdout' })
      .option('warehouse', {
        type: 'string',
        describe: 'list the generic tables and columns this warehouse added (schema_columns)',
      }) as Argv<SchemaArgs>,
  handler: async (args: ArgumentsCamelCase<SchemaArgs>) => {
    const { martsMarkdownOf } = await import('../../models/index.js');
    const { schemaMarkdown, withWarehouse } = await import('../../warehouse/index.js');
    if (args.warehouse) {
      requireWarehouse(args.warehouse);
      const rows = await withWarehouse(args.warehouse, (wh) =>
        wh.all<{ t: string; c: string; k: string; p: string | null }>(
          `SELECT table_name AS t, column_name AS c, kind AS k, path AS p FROM schema_columns ORDER BY table_name, position`,
        ),
      );
      for (const r of rows) process.stdout.write(`${r.t}.${r.c}\t${r.k}\t${r.p ?? ''}\n`);
      // Said on stderr, so a script reading the list still reads an empty one.
      if (rows.length === 0)
        process.stderr.write('no table or column was added from the data: every table has the schema docs/schema.md declares\n');
      return;
    }
    const md = schemaMarkdown(await martsMarkdownOf());
    if (args.write)
      await writeFile(args.write, md).catch((err: unknown) => {
        throw pathError(err, `--write ${args.write}`, 'Pass a file in a folder that is there and you can write, such as docs/schema.md.');
      });
    else process.stdout.write(md);
  },
};
