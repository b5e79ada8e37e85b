/** A task id as the service makes them (spec: a UUID). */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * Whether `id` is a task id we accept from the service. Task ids are written to the
 * warehouse, put in URLs and printed in CSVs: anything but a UUID (a formula, a path, a
 * megabyte of text) is refused where the service's answers are read.
 */
export function isTaskId(id: unknown): id is string {
  return typeof id === 'string' && UUID.test(id);
}
