import { hideBin } from 'yargs/helpers';
import { buildCli } from './cli/build-cli.js';
import { exitWithError } from './cli/exit.js';

try {
  await buildCli(hideBin(process.argv)).parseAsync();
} catch (err) {
  exitWithError(err);
}
