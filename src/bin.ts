import { hideBin } from 'yargs/helpers';
import { buildCli } from './cli/build-cli.js';
import { exitWithError } from './cli/exit.js';

// Everything this process creates (the warehouse, and files DuckDB writes itself: its WAL,
// Parquet copies) is the owner's alone, whatever umask the shell had.
process.umask(0o077);

try {
  await buildCli(hideBin(process.argv)).parseAsync();
} catch (err) {
  exitWithError(err);
}
