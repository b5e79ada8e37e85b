import { hideBin } from 'yargs/helpers';
import { buildCli } from './cli/build-cli.js';
import { exitWithError } from './cli/exit.js';

// Everything this process creates (the warehouse, and files DuckDB writes itself: its WAL,
// Parquet copies) is the owner's alone, whatever umask the shell had.
process.umask(0o077);

// A reader that stops early (`pipeline endpoints | head`) closes the pipe: what is left to print
// goes nowhere, and the command still finishes its work (a run piped to `head` is not cut short).
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
});

try {
  await buildCli(hideBin(process.argv)).parseAsync();
} catch (err) {
  exitWithError(err);
}
