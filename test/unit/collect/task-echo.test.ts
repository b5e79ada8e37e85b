import { describe, expect, it } from 'vitest';
import { echoMismatch, echoOf } from '../../../src/collect/task-echo.js';

const posted = { keyword: '100%25 Café', location_code: 2840, language_code: 'en', device: 'desktop', depth: 100, tag: 'abc123' };

describe("what a postback's data must echo", () => {
  it('takes the echo of the posted fields whatever the case, Unicode form, escapes and number form, and extra fields', () => {
    const echo = echoOf(posted)!;
    expect(echo.startsWith('keyword,location_code,language_code,device,tag:')).toBe(true);
    expect(echoMismatch(echo, { data: { ...posted, api: 'serp', function: 'task_post', se: 'engA' } })).toBeNull();
    // The service decodes %25; the keyword's é decomposed; the code as text.
    expect(echoMismatch(echo, { data: { ...posted, keyword: '100% CAFE\u0301', location_code: '2840' } })).toBeNull();
    // depth is not a naming field: a different echo of it does not refuse.
    expect(echoMismatch(echo, { data: { ...posted, depth: 10 } })).toBeNull();
  });

  it('refuses data naming another keyword, place or tag, data without a posted field, and no data', () => {
    const echo = echoOf(posted)!;
    const why = "its task's data does not echo what was posted (keyword, location_code, language_code, device, tag)";
    expect(echoMismatch(echo, { data: { ...posted, keyword: '100% cafe latte' } })).toBe(why);
    expect(echoMismatch(echo, { data: { ...posted, location_code: 2826 } })).toBe(why);
    expect(echoMismatch(echo, { data: { ...posted, tag: 'abc124' } })).toBe(why);
    const { device: _device, ...withoutDevice } = posted;
    expect(echoMismatch(echo, { data: withoutDevice })).toBe(why);
    expect(echoMismatch(echo, {})).toBe('its task has no data echoing what was posted');
    expect(echoMismatch(echo, { data: [posted] })).toBe('its task has no data echoing what was posted');
  });

  it('has nothing to check for a task that names none of the fields', () => {
    expect(echoOf({ depth: 10, limit: 5 })).toBeNull();
  });
});
