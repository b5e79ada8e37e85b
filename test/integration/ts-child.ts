import { fileURLToPath } from 'node:url';

const FROM_DIST = fileURLToPath(new URL('./child-from-dist.mjs', import.meta.url));

/**
 * The node arguments that run `script`, a TypeScript child of a test: through tsx, with the modules
 * of src/ it imports loaded from dist/ while that build is current (child-from-dist.mjs), else
 * compiled from the sources by tsx. Either way the child runs src/ as it is now.
 */
export function tsChildArgs(script: string, args: readonly string[] = []): string[] {
  return ['--import', 'tsx', '--import', FROM_DIST, script, ...args];
}
