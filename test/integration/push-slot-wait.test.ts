import { describe, expect, it } from 'vitest';
import { expectEachCollectedOnce, pushPipeline, pushWorld } from './push-helpers.js';

describe('a postback that finds no landing slot in time', () => {
  it('is answered 503; the service records the failed callback and the run gets the task for free, buying nothing twice', async () => {
    // One landing slot and no wait for it: the emulator sends every due postback at once, so
    // those that arrive while another lands are refused at once, as after 4 s of waiting.
    const w = await pushWorld();
    const summary = await w.run(pushPipeline(20), { callbackLanding: { slots: 1, slotWaitMs: 0 } });
    expect(summary.state).toBe('completed');
    const note = w.notes.find((n) => n.startsWith('push:'));
    expect(note).toMatch(/refused [1-9]\d*x503/);
    // The service lists each refusal as a failed callback, and the run finds them in `errors`.
    const stats = await w.stats();
    expect(stats.callbacks.failed).toBeGreaterThan(0);
    expect(w.calls('/serp/errors')).toBeGreaterThan(0);
    // Recovered by a resend or a task_get, both free: only the POST was charged.
    expect(w.calls('/appendix/webhook_resend') + w.calls('/task_get/')).toBeGreaterThan(0);
    const charged = w.sb.log.filter((l) => Number(l.chargeCny) !== 0).map((l) => l.path);
    expect(charged.length).toBeGreaterThan(0);
    expect(charged.filter((p) => !p.endsWith('/task_post'))).toEqual([]);
    expect(w.calls('/task_post')).toBe(1);
    await expectEachCollectedOnce(w, 20, expect);
  });
});
