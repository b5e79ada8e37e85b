/** The exit code of a run lives with the error codes' table (errors.ts): one rule per exit. */
export { runExitCode } from '../errors.js';
