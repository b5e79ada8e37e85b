import { describe, expect, it } from 'vitest';
import { parsePipeline } from '../../src/config/index.js';
import { EtlError } from '../../src/errors.js';
import { pushWorld } from './push-helpers.js';

function windowPipeline(mode: 'pull' | 'push') {
  const keywords = Array.from({ length: 400 }, (_, i) => JSON.stringify(`window keyword ${i}`)).join(', ');
  const text = `name: push-test\nschedule: '*/5 * * * *'\ncollection:\n  mode: ${mode}\n  listen: "127.0.0.1:0"\njobs:\n  - kind: serp\n    depth: 10\n    locations: [2840]\n    keywords: [${keywords}]\n`;
  return parsePipeline(text, 'push-test.yaml', {});
}

describe('a pull night the rate limits cannot finish before the next one', () => {
  it('is refused before anything is bought, saying how long pull takes and to use push', async () => {
    const w = await pushWorld();
    // 400 tasks: 4 POSTs, 400 task_get and a tasks_ready at 60 a minute is 6.75 min, every 5 minutes.
    const err = await w.run(windowPipeline('pull')).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(EtlError);
    expect((err as EtlError).code).toBe('ETL_CONFIG_INVALID');
    expect((err as EtlError).message).toMatch(/by pull takes at least 0\.1 h .* longer than the 0\.1 h between nights .*Use push/);
    expect(w.calls('task_post')).toBe(0);
    expect((await w.stats()).charged_cny).toBe('0.0000');
  });
});
