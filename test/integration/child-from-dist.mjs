// The tests' TypeScript children (`node --import tsx --import ./child-from-dist.mjs <child>.ts`, see
// CHILD_ARGS in helpers.ts) load src/ from its compiled build while dist/ is a build of src/ as it
// is now (bin/source-stamp.mjs, the check bin/pipeline.mjs makes): each import of a module under src/
// gets the same module of dist/, so a child starts as fast as a CLI child instead of compiling the
// sources it loads through tsx. The child's own file (and test helpers it imports) still go through
// tsx. Without a current build (none yet, src/ edited since, PIPELINE_FROM_SOURCE=1) this registers
// nothing and the child runs the sources through tsx, as before: never a build older than the code.
import { register } from 'node:module';
import { fileURLToPath } from 'node:url';
import { buildIsCurrent } from '../../bin/source-stamp.mjs';

const root = new URL('../../', import.meta.url);
const src = new URL('src/', root);
const dist = new URL('dist/', root);
if (process.env.PIPELINE_FROM_SOURCE !== '1' && buildIsCurrent(fileURLToPath(src), fileURLToPath(dist))) {
  register('./child-from-dist-hooks.mjs', import.meta.url, { data: { src: src.href, dist: dist.href } });
}
