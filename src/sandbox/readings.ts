/**
 * Where the spec (/work/shared/spec/service-interface.md) is silent or contradicts itself, the
 * emulator still has to answer one way. Each such point is one named entry here: the reading
 * served by default (today's behaviour), the other plausible readings, and the spec's words
 * (or its silence). spec/limits.ts and spec/prices.ts read these defaults; the points marked
 * `switchable` can also be chosen per emulator (`startSandbox({ readings })`,
 * `pipeline sandbox --reading refunds=balance,rateLimitBody=http200,clockSkew=-120s`), so the
 * money and crash tests can run under each (the served set: `ServedReadings` below).
 */

interface Reading<T> {
  /** The reading served by default. */
  value: T;
  /** Every reading the emulator knows for the point (the default first). */
  options: readonly T[] | 'any';
  /** The spec's words on the point, or its silence. */
  spec: string;
  /** What each reading means, in the emulator. */
  meaning: string;
  /** Can be chosen per emulator (`--reading k=v`). */
  switchable?: true;
}

function reading<T>(r: Reading<T>): Reading<T> {
  return r;
}

export const READINGS = {
  refunds: reading({
    value: 'task-cost' as 'task-cost' | 'balance',
    options: ['task-cost', 'balance'],
    switchable: true,
    spec: 'Billing: "If fewer results are returned than `depth`, the difference is refunded to the balance." How (or whether) a refund shows in a task\'s `cost` or in the charge headers: not said.',
    meaning:
      "task-cost: the unused depth is refunded to the balance when the task is done, and from then on the task's `cost` (task_get, postback) is the net cost; a live answer's charge and cost headers and `cost` are net. id_list keeps the cost at creation. " +
      'balance: the refund shows only in the balance (X-Svc-Balance-CNY, user_data); every `cost` and charge header stays the gross price at creation, so a client learns of the refund only from the balance.',
  }),
  rateLimitBody: reading({
    value: 'http429' as 'http429' | 'http200',
    options: ['http429', 'http200'],
    switchable: true,
    spec: 'Errors rule 4: "For generic 429 and 5xx responses, retry with exponential backoff." The /v3 body of a rate-limit refusal and its status code are not shown (the errors appendix is "not shown beyond the codes above").',
    meaning:
      'http429: HTTP 429, envelope top-level 40202, no tasks, `Retry-After` and `retry-after-ms`. ' +
      "http200: HTTP 200, top-level 20000, tasks_error = tasks_count, every posted task echoed with task status 40202 (POST; a GET gets one such task), `Retry-After` kept. /v1 keeps its 429 (the spec's errors table gives 429 for /v1).",
  }),
  asyncTasksPerPost: reading({
    value: 100 as 100 | 1,
    options: [100, 1],
    switchable: true,
    spec: 'Limits: "Sandbox asynchronous POST | 100 tasks per request; the sandbox text states production asynchronous POST takes 1 task, while other endpoint texts state 100"; Errors: "more tasks in one POST than allowed | task code 40006".',
    meaning:
      '100: a task_post POST takes 100 tasks; 1: one (the production reading of the sandbox text). Tasks past it get 40006 and are not charged. ' +
      'Engine A events `task_post` keeps its own 100 under both ("create an events task (array of up to 100 objects)"); `maxTasksPerPost` of startSandbox lowers every task_post further.',
  }),
  liveTasksPerPost: reading({
    value: 1,
    options: [1, 100],
    spec: 'No count of tasks per live POST is given ("Live: one POST returns the result directly").',
    meaning: 'tasks past the first of a live POST are refused with 40000 (not charged), as one result is returned per call.',
  }),
  readyListPaging: reading({
    value: 1000 as number,
    options: 'any',
    switchable: true,
    spec: '"Request and response shapes of `tasks_ready` ... : not shown." (result-shapes.md: at most 1000 tasks a call.)',
    meaning:
      'one tasks_ready call lists at most this many ready tasks (any whole number 1-1000; e.g. `readyListPaging=100`), oldest first, with no paging fields; the rest are listed once these are collected.',
  }),
  extraDepthPrice: reading({
    value: 0.75 as 0.75 | 1 | 0,
    options: [0.75, 1, 0],
    switchable: true,
    spec: 'Billing: "A `depth` above 10 can add charges per additional block of 10 results." The amount: not said.',
    meaning:
      'each further started block of 10 results costs this fraction of the depth-10 base price, rounded to 0.0001 CNY: 0.75 (0.0043 CNY → +0.0032 a block), 1 (each block at the base price, +0.0043), 0 (a flat price whatever the depth, so nothing to refund either). ' +
      'The charge header (`X-Svc-Charge-CNY`) and the task `cost` always carry the price served; unused depth is refunded at the same block price.',
  }),
  clockSkew: reading({
    value: 0 as number,
    options: 'any',
    switchable: true,
    spec: 'id_list: "`datetime_from` ... not after now", "`datetime_to` | same format; not after now"; errors: "`datetime_from` ... not later than now". Whose "now" (the server\'s clock, which a client does not share): not said.',
    meaning:
      "the emulator's clock runs this many seconds off the clock it was given (`clockSkew=-120s`: two minutes behind the client, `+120s`: ahead; -86400 to 86400); every window, delay and `now` rule reads it, and the `Date` header of each answer shows it. " +
      '0: the server\'s clock is the client\'s. Behind, a client that bounds `datetime_to` by its own clock is refused (40501 "not later than now").',
  }),
  aiCreatedStatus: reading({
    value: 20100 as 20100 | 20000,
    options: [20100, 20000],
    switchable: true,
    spec: 'AI-optimized response: "Only `id`, `status_code`, `status_message` remain of the service status data"; success rule: "20000, or 20100 for task creation". Whether the top-level `status_code` of a task-creation `.ai` reply is the task\'s (20100) or the call\'s (20000): not said.',
    meaning:
      "20100: a `task_post.ai` answer carries the (first) task's status, 20100 `Task Created.`; 20000: the call's, 20000 `Ok.` (the task id is still `id`). Refusals keep their own code under both.",
  }),
  aiZero: reading({
    value: 'kept' as 'kept' | 'removed',
    options: ['kept', 'removed'],
    switchable: true,
    spec: 'AI-optimized response: "Fields in `items` whose value is empty, null or false are removed." Whether 0 is "empty": not said.',
    meaning:
      "kept: a field whose value is 0 stays (only `''`, null, false, `[]`, `{}` go); removed: 0 goes too, so a rank, volume or count of 0 is absent from the `.ai` items.",
  }),
  postbackEncoding: reading({
    value: 'gzip' as 'gzip' | 'gzip-bare' | 'deflate',
    options: ['gzip', 'gzip-bare', 'deflate'],
    switchable: true,
    spec: 'Events: "postback | ... | POST, gzip-compressed"; task lifecycle: "a gzip-compressed POST with the result is sent". The callback request\'s headers: "Body shape of callback requests and any signature on them: not shown."',
    meaning:
      'gzip: the body gzip-compressed with `Content-Encoding: gzip`; gzip-bare: the same gzip bytes with no `Content-Encoding` (the spec says only "gzip-compressed"); deflate: zlib-deflated with `Content-Encoding: deflate` (a loose reading of "compressed"). `Content-Type: application/json` under all three.',
  }),
  imageFormats: reading({
    value: ['advanced'] as readonly string[],
    options: 'any',
    spec: 'Versioning 6: "Images | `/v3/serp/engA/images/task_post/`, `tasks_ready/`, `task_get/advanced/`" (the organic row names `task_get/regular/`, `.../advanced/`, `.../html/`); Fixed-task record: "null when that format is unsupported for the endpoint". Versioning 8, "all three SERP formats readable by GET after one paid POST", could be read as covering images too.',
    meaning:
      'engA/images serves `task_get/advanced` and `live/advanced` only: `endpoint_regular` and `endpoint_html` are null in its tasks_ready and tasks_fixed rows, a GET of `task_get/regular|html` or a POST to `live/regular` is 404 / 40400, and a task_post whose `postback_data` names regular or html is refused (40501). Every other SERP type serves all three (Versioning 8).',
  }),
  keywordFamily: reading({
    value: ['/v3/svc_labs/', '/v3/ai_optimization/ai_keyword_data/'] as readonly string[],
    options: 'any',
    spec: 'Limits: "SERP, keyword and domain-analysis endpoints | 60 per minute", "Other `/v3` | 120 per minute". Whether keyword labs and AI keyword data are "keyword" endpoints: not said.',
    meaning:
      'paths under these prefixes count against the 60-a-minute family (the stricter reading); any other api not named by a row counts as "Other /v3".',
  }),
  monthBack: reading({
    value: 'calendar' as 'calendar' | '30-days',
    options: ['calendar', '30-days'],
    spec: 'id_list: "earliest 1 month back when `include_metadata` is true, 6 months back when false". How a month is counted: not said.',
    meaning:
      "calendar: the same day and time N calendar months back, a missing day read as the month's last (31 March → 28/29 February). 30-days: N × 30 days.",
  }),
  keywordLength: reading({
    value: 'decoded' as 'decoded' | 'as-sent',
    options: ['decoded', 'as-sent'],
    spec: 'Events table: "`keyword` | required; at most 700 characters; `%##` is decoded, `+` becomes a space". Whether the 700 count the text sent or the text decoded: not said.',
    meaning: 'decoded: the characters (code points) of the keyword as the service searches it; as-sent: of the text posted.',
  }),
  keywordBadEscapes: reading({
    value: 'ascii-decoded' as 'ascii-decoded' | 'kept',
    options: ['ascii-decoded', 'kept'],
    spec: 'Events table: "`%##` is decoded". A run of escapes that is not UTF-8 (`%C3%28`): not said.',
    meaning:
      'ascii-decoded: each escape below %80 is decoded alone, the others kept as written (`%C3(`), as form parsers do; kept: the whole run stays as written.',
  }),
  languageCode: reading({
    value: 2,
    options: 'any',
    spec: 'Events table: "`language_code` | string | optional; ... English (`en`) is supported". Its form: not said.',
    meaning: 'a SERP `language_code` shorter than this many characters is refused (40501): codes are two letters or more.',
  }),
  chatRoles: reading({
    value: ['system', 'developer', 'user', 'assistant', 'tool'] as readonly string[],
    options: 'any',
    spec: 'Chat completion (text): "`messages` (array of objects with `role` and `content`)"; "Both use a widely used chat/embeddings wire format". The roles: not listed.',
    meaning: 'a message whose role is not one of these is refused (400): the roles of the widely used wire format.',
  }),
  keywordDecoding: reading({
    value: 'every-serp-keyword' as 'every-serp-keyword' | 'events-only',
    options: ['every-serp-keyword', 'events-only'],
    spec: 'The `%##` / `+` decoding is stated in the events table only; the organic request fields are "not shown".',
    meaning:
      "every SERP type's `keyword` is decoded before it is searched (and echoed in the result's keyword); no other family's keywords are.",
  }),
  serpRules: reading({
    value: 'events-table' as const,
    options: ['events-table'],
    spec: '"Request parameters of `v2/live/advanced/`, `v2/task_post/` and `task_get/advanced/`: not shown."; the organic and other SERP request tables are not given.',
    meaning:
      "every SERP task is checked by the events table's rules for the fields it names (keyword 700, one of three location fields, depth ≤ 700, priority 1/2, tag 255), plus device/OS pairs and `target` of the v3 notes; fields not named pass through.",
  }),
  readyListWindow: reading({
    value: '3 days (task-store.ts READY_LIST_WINDOW_MS)' as const,
    options: 'any',
    spec: 'States: "done without callback | ... | listed in the ready list | collect by `task_get`". How long an uncollected task stays listed: not said (result-shapes.md says the last 3 days).',
    meaning:
      'a done, uncollected task leaves the ready list 3 days after it is done (still served by task_get). Not yet read from this table: the constant is in task-store.ts, which another change is reworking.',
  }),
  idListSort: reading({
    value: 'posted' as 'posted' | 'done',
    options: ['posted', 'done'],
    spec: 'id_list: "`sort` | `asc` or `desc`; default `asc`; sorts by task execution time"; the window is given by `datetime_from` / `datetime_to` without saying which time they bound.',
    meaning:
      'posted: tasks are windowed and sorted by the time they were posted (datetime_posted); done: by datetime_done. Only `posted` is implemented (utilities/id-list.ts).',
  }),
  resendWithoutCallback: reading({
    value: 40501,
    options: 'any',
    spec: 'Events: "a task whose function has no callback support gets task status 40503". A task of a function with callbacks that was posted without a callback URL: not said.',
    meaning: 'webhook_resend answers such a task with this status (Invalid Field).',
  }),
  unlistedFields: reading({
    value: 'refuse-where-whole-table' as const,
    options: ['refuse-where-whole-table'],
    spec: 'Where a table lists every field (events task_post, on_page/resources, errors, id_list, embeddings), a field outside it: answer not said.',
    meaning:
      'refused with 40506 (Unknown Fields) there; passed through and echoed in `data` everywhere else. errors and id_list also take `tag`.',
  }),
  searchVolumeKeywords: reading({
    value: 700,
    options: 'any',
    spec: 'Limits: "Batch search volume (v3 keywords data) | up to 700 keywords per task at equal price". Whether more are refused or priced higher: not said.',
    meaning: 'a task with more keywords is refused (40501).',
  }),
  imageEdges: reading({
    value: { '0.5K': 512, '1K': 1024, '2K': 2048, '4K': 4096 } as Readonly<Record<'0.5K' | '1K' | '2K' | '4K', number>>,
    options: 'any',
    spec: 'Image generation: "maximum 4K; mapped by longest edge to billing tier 0.5K, 1K, 2K or 4K". The pixel edges of the tiers: not said.',
    meaning: 'a longest edge up to the value is that tier; above the 4K value the size is refused (400).',
  }),
  embeddingDimensions: reading({
    value: { 'text-embedding-3-small': 1536, 'text-embedding-3-large': 3072 } as Readonly<Record<string, number>>,
    options: 'any',
    spec: 'Embeddings: "`dimensions` | integer | no | output dimension; only `text-embedding-3-*`". Native sizes and the largest `dimensions`: not said.',
    meaning: 'the vector length when `dimensions` is omitted (ada-002: 1536) and the largest `dimensions` taken (400 above it).',
  }),
  unshownPrices: reading({
    value: 'emulator-list' as const,
    options: ['emulator-list'],
    spec: 'Only events task_post (about 0.0240 CNY), on_page/resources (0), the free utilities and the /v1 prices are given; other /v3 prices: not shown ("Live mode costs more than standard mode"; "Priority 2 costs extra").',
    meaning: "the emulator's own list (spec/prices.ts): priority 2 doubles, live is 3.3 times standard.",
  }),
  v1Rounding: reading({
    value: 'ceil-per-call' as const,
    options: ['ceil-per-call'],
    spec: "Chat and embeddings prices are per 1M / 1K tokens; the rounding of a call's charge: not said.",
    meaning: 'each /v1 call is charged its token price rounded up to 0.0001 CNY.',
  }),
} as const;

export type ReadingName = keyof typeof READINGS;

type Value<K extends keyof typeof READINGS> = (typeof READINGS)[K]['value'];

/** The readings one emulator serves where a choice is switchable. */
export interface ServedReadings {
  refunds: Value<'refunds'>;
  rateLimitBody: Value<'rateLimitBody'>;
  asyncTasksPerPost: Value<'asyncTasksPerPost'>;
  extraDepthPrice: Value<'extraDepthPrice'>;
  /** Seconds the emulator's clock runs off the clock it was given (negative: behind). */
  clockSkew: number;
  aiCreatedStatus: Value<'aiCreatedStatus'>;
  aiZero: Value<'aiZero'>;
  readyListPaging: number;
  postbackEncoding: Value<'postbackEncoding'>;
}

export type SwitchableReading = keyof ServedReadings;

export const DEFAULT_READINGS: Readonly<ServedReadings> = {
  refunds: READINGS.refunds.value,
  rateLimitBody: READINGS.rateLimitBody.value,
  asyncTasksPerPost: READINGS.asyncTasksPerPost.value,
  extraDepthPrice: READINGS.extraDepthPrice.value,
  clockSkew: READINGS.clockSkew.value,
  aiCreatedStatus: READINGS.aiCreatedStatus.value,
  aiZero: READINGS.aiZero.value,
  readyListPaging: READINGS.readyListPaging.value,
  postbackEncoding: READINGS.postbackEncoding.value,
};

/** The switchable names, in the table's order. */
export const SWITCHABLE_READINGS = Object.keys(DEFAULT_READINGS) as SwitchableReading[];

/** Readings whose values are not a list: how a text is read, or a message naming what is accepted. */
const OPEN_VALUES: Partial<Record<SwitchableReading, { parse: (text: string) => number | undefined; accepts: string }>> = {
  clockSkew: {
    // `-120s`, `+120s`, `120`, `-2m`, `0`
    parse: (text) => {
      const m = /^([+-]?\d+)(s|m)?$/.exec(text);
      if (!m) return undefined;
      const secs = Number(m[1]) * (m[2] === 'm' ? 60 : 1);
      return Math.abs(secs) <= 86_400 ? secs : undefined;
    },
    accepts: 'a whole number of seconds from -86400 to 86400, signed, with an optional s or m unit (e.g. -120s, +120s, +2m)',
  },
  readyListPaging: {
    parse: (text) => (/^\d+$/.test(text) && Number(text) >= 1 && Number(text) <= 1000 ? Number(text) : undefined),
    accepts: 'a whole number from 1 to 1000 (e.g. 100)',
  },
};

/**
 * Parses `refunds=balance,rateLimitBody=http200,clockSkew=-120s` (the CLI's `--reading`), or an
 * object of the same names, into served readings (defaults for the names not given). Only
 * switchable points are taken; an unknown name or value throws, naming the choices.
 */
export function parseReadings(text: string | Partial<ServedReadings> | undefined): ServedReadings {
  if (text === undefined) return { ...DEFAULT_READINGS };
  const pairs: Array<[string, string]> =
    typeof text === 'string'
      ? text
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean)
          .map((p) => {
            const [k, v] = p.split('=');
            if (!k || v === undefined) throw new Error(`reading "${p}" is not name=value (e.g. refunds=balance)`);
            return [k.trim(), v.trim()];
          })
      : Object.entries(text).map(([k, v]) => [k, String(v)]);
  const out: ServedReadings = { ...DEFAULT_READINGS };
  for (const [k, v] of pairs) {
    if (!(SWITCHABLE_READINGS as string[]).includes(k))
      throw new Error(`unknown reading "${k}": switchable readings are ${SWITCHABLE_READINGS.join(', ')}`);
    const name = k as SwitchableReading;
    const open = OPEN_VALUES[name];
    let value: unknown;
    if (open) {
      value = open.parse(v);
      if (value === undefined) throw new Error(`reading ${k}=${v}: give ${open.accepts}`);
    } else {
      const options = READINGS[name].options as readonly unknown[];
      value = options.find((o) => String(o) === v);
      if (value === undefined) throw new Error(`reading ${k}=${v}: choose one of ${options.join(', ')}`);
    }
    (out as unknown as Record<string, unknown>)[name] = value;
  }
  return out;
}
