// `npx tsx bench/sandbox.ts`: how fast the emulator serves task_get (it runs in its own
// process, as the service would), so tests and demos are never bound by it.
//   sandbox.task_get_per_s   task_get answers per second on this machine
import { benchTaskGet } from './lib/bench-task-get.js';

console.log(`sandbox.task_get_per_s ${Math.round(await benchTaskGet())}`);
