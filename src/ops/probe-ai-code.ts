import { request, type Dispatcher } from 'undici';
import type { ServiceReadingsRecord } from '../warehouse/index.js';

/** GET `task_get/advanced/{id}.ai` (free, no extra charge): the status code it answers with, and its shape. */
export async function readAiCode(
  service: { baseUrl: string; apiKey: string },
  path: string,
  dispatcher?: Dispatcher,
): Promise<ServiceReadingsRecord['readings']['aiCodes']> {
  try {
    const res = await request(service.baseUrl.replace(/\/+$/, '') + path, {
      method: 'GET',
      headers: { authorization: `Bearer ${service.apiKey}`, 'content-type': 'application/json' },
      dispatcher,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const text = await res.body.text();
    const body = JSON.parse(text) as { status_code?: unknown; tasks?: unknown; items?: unknown; id?: unknown };
    const shape =
      'tasks' in body ? 'a standard envelope' : Array.isArray(body.items) ? 'the .ai shape (id, status_code, items)' : 'neither shape';
    return typeof body.status_code === 'number'
      ? { value: body.status_code, detail: `HTTP ${res.statusCode}, ${shape}` }
      : { value: 'unknown', detail: `HTTP ${res.statusCode}, no status_code; ${shape}` };
  } catch (err) {
    return { value: 'unknown', detail: `the .ai task_get failed: ${(err as Error).message}` };
  }
}
