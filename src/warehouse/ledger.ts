import { runColumns, varchars, integers } from './bulk.js';
import { sqlList, sqlString } from './columns.js';
import type { Warehouse } from './warehouse.js';

/** A call's ledger row, as the raw landing knows it. */
export interface LedgerCall {
  callId: string;
  endpointId: string;
  method: string;
  path: string;
  /** Null for a call sent whose answer has not arrived (RawLanding.sending), or never did. */
  httpStatus: number | null;
  requestId: string | null;
  chargeCny: string | null;
  refundCny: string;
  costUsd: string | null;
  balanceCny: string | null;
  tasks: number;
  calledAt: Date;
}

/** A collected task and the `cost` its result came with: the net cost, once a refund happened. */
export interface CollectedCost {
  taskId: string;
  /** The task's `cost` (raw USD) in the body that carried its result. */
  costUsd: number;
  /** When that body arrived: the refund row's `called_at`. */
  seenAt: Date;
}

/**
 * Decimals of a refund in CNY. The service charges in units of 0.0001 CNY (the spec's
 * prices and the charge headers carry four decimals), so a refund, worked out from USD
 * costs at a ratio, is rounded to that unit.
 */
const REFUND_DECIMALS = 4;

/** A call's row written before it was sent, whose answer has not been landed (a refund row has a task id). */
const SENT_UNANSWERED = 'http_status IS NULL AND task_id IS NULL';

/**
 * The one writer of the `ledger` table (the raw landing and the reindex call it): a row per
 * call from its charge headers, and a row per refund.
 *
 * How a refund is seen (the spec says only that unused depth "is refunded to the balance",
 * not how a client learns of it; no header or field names it): the task's `cost` in the
 * body that carries its result (`task_get`, a postback) is the net cost, lower than the
 * `cost` the POST answered when part of the price came back. The refund is that
 * difference in USD, priced in CNY at the creating POST's own ratio (its
 * `X-Svc-Charge-CNY` over its `X-Svc-Cost-USD`), rounded to 0.0001 CNY. It is recorded as
 * its own row (`call_id` `refund:<task_id>`, method `REFUND`, negative `charge_cny`,
 * `refund_cny` the amount, `task_id` the task) under the task's run and pipeline, once per
 * task whatever the number of fetches. A live call needs none: its headers are already net.
 */
export const ledgerWriter = {
  /**
   * The calls of a landing group (one transaction is the caller's). An answered POST's row
   * replaces the one written before it was sent (RawLanding.sending).
   */
  async calls(wh: Warehouse, ctx: { runId: string; pipeline: string }, rows: readonly LedgerCall[]): Promise<void> {
    if (rows.length === 0) return;
    const answeredPosts = rows.filter((r) => r.method === 'POST' && r.httpStatus !== null).map((r) => r.callId);
    if (answeredPosts.length > 0)
      await wh.run(`DELETE FROM ledger WHERE ${SENT_UNANSWERED} AND call_id IN (SELECT unnest(${sqlList(answeredPosts)}::VARCHAR[]))`);
    await runColumns(
      wh,
      `INSERT INTO ledger (call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id, charge_cny, refund_cny, cost_usd, balance_cny, tasks, called_at, task_id, charge_estimated)
       SELECT call_id, $1, $2, endpoint_id, method, path, http_status, request_id, charge_cny::DECIMAL(18,6), refund_cny::DECIMAL(18,6), cost_usd::DECIMAL(18,6),
              balance_cny::DECIMAL(18,6), tasks, called_at::TIMESTAMPTZ, NULL, false
       FROM (SELECT unnest($3::VARCHAR[]) AS call_id, unnest($4::VARCHAR[]) AS endpoint_id, unnest($5::VARCHAR[]) AS method, unnest($6::VARCHAR[]) AS path,
                    unnest($7::INTEGER[]) AS http_status, unnest($8::VARCHAR[]) AS request_id, unnest($9::VARCHAR[]) AS charge_cny, unnest($10::VARCHAR[]) AS refund_cny,
                    unnest($11::VARCHAR[]) AS cost_usd, unnest($12::VARCHAR[]) AS balance_cny, unnest($13::INTEGER[]) AS tasks, unnest($14::VARCHAR[]) AS called_at)`,
      [
        ctx.runId,
        ctx.pipeline,
        varchars(rows.map((r) => r.callId)),
        varchars(rows.map((r) => r.endpointId)),
        varchars(rows.map((r) => r.method)),
        varchars(rows.map((r) => r.path)),
        integers(rows.map((r) => r.httpStatus)),
        varchars(rows.map((r) => r.requestId)),
        varchars(rows.map((r) => r.chargeCny)),
        varchars(rows.map((r) => r.refundCny)),
        varchars(rows.map((r) => r.costUsd)),
        varchars(rows.map((r) => r.balanceCny)),
        integers(rows.map((r) => r.tasks)),
        varchars(rows.map((r) => r.calledAt.toISOString())),
      ],
    );
  },

  /**
   * Prices the ledger rows of POSTs whose answer never arrived (`http_status` and `charge_cny`
   * null), once `id_list` has told which of their tasks the service created: `cost_usd` is the
   * sum of those tasks' costs (`tasks.cost_usd`, id_list's; a task it did not list was never
   * created and cost nothing), and `charge_cny` that cost at the CNY/USD ratio of the endpoint's
   * last answered calls (else of any `/v3` call's), rounded to 0.0001 CNY, marked
   * `charge_estimated`. A POST with a task whose outcome is still unknown is left as it is, and
   * so is one with no ratio to price it at (its USD cost is still filled in). Returns the rows
   * priced.
   */
  async estimateLost(wh: Warehouse, callIds: readonly string[]): Promise<{ callId: string; chargeCny: string | null; costUsd: string }[]> {
    if (callIds.length === 0) return [];
    const lost = await wh.all<{ callId: string; endpointId: string; cost: string }>(
      `SELECT l.call_id AS "callId", any_value(l.endpoint_id) AS "endpointId",
              coalesce(sum(t.cost_usd) FILTER (WHERE t.task_id IS NOT NULL), 0)::DECIMAL(18,6)::VARCHAR AS cost
       FROM ledger AS l JOIN tasks AS t ON t.post_call_id = l.call_id
       WHERE l.call_id IN (SELECT unnest(${sqlList([...new Set(callIds)])}::VARCHAR[])) AND l.http_status IS NULL AND l.charge_cny IS NULL AND l.task_id IS NULL
       GROUP BY l.call_id HAVING count(*) FILTER (WHERE t.state IN ('planned', 'unknown')) = 0
       ORDER BY 1`,
    );
    const out: { callId: string; chargeCny: string | null; costUsd: string }[] = [];
    const ratios = new Map<string, string | null>();
    for (const c of lost) {
      // The last 100 answered calls: the headers round the charge to 0.0001 CNY and the cost to
      // a micro-dollar, and a sum over many calls gives the ratio more exactly than one call.
      const ratioOf = async (where: string, params: string[]) =>
        (
          await wh.all<{ r: string | null }>(
            `SELECT (sum(charge_cny) / sum(cost_usd))::VARCHAR AS r FROM (
               SELECT charge_cny, cost_usd FROM ledger
               WHERE ${where} AND http_status IS NOT NULL AND task_id IS NULL AND charge_cny > 0 AND cost_usd > 0 AND NOT coalesce(charge_estimated, false)
               ORDER BY called_at DESC LIMIT 100)`,
            params,
          )
        )[0]?.r ?? null;
      // One look per endpoint: a crash's lost POSTs are often of one endpoint.
      let ratio = ratios.get(c.endpointId);
      if (ratio === undefined) {
        ratio = (await ratioOf('endpoint_id = $1', [c.endpointId])) ?? (await ratioOf(`path LIKE '/v3/%'`, []));
        ratios.set(c.endpointId, ratio);
      }
      const [row] = await wh.all<{ chargeCny: string | null; costUsd: string }>(
        // A POST none of whose tasks was created (killed before it went, or refused whole) cost
        // nothing, with or without a ratio.
        `UPDATE ledger SET cost_usd = $2::DECIMAL(18,6),
                charge_cny = CASE WHEN $2::DECIMAL(18,6) = 0 THEN 0 ELSE round($2::DECIMAL(18,6) * $3::DOUBLE, ${REFUND_DECIMALS}) END::DECIMAL(18,6),
                charge_estimated = $2::DECIMAL(18,6) = 0 OR $3::DOUBLE IS NOT NULL
         WHERE call_id = $1 RETURNING charge_cny::VARCHAR AS "chargeCny", cost_usd::VARCHAR AS "costUsd"`,
        [c.callId, c.cost, ratio],
      );
      if (row) out.push({ callId: c.callId, ...row });
    }
    return out;
  },

  /**
   * The row of a charged POST about to be sent (RawLanding.sending): `http_status` and
   * `charge_cny` null, as no answer came yet; `called_at` when it is sent. Written in, not bound
   * (one call into DuckDB, not three): a live night makes one per call.
   */
  async sent(wh: Warehouse, ctx: { runId: string; pipeline: string }, call: { callId: string; at: Date; method: string; path: string; endpointId: string; tasksSent: number }): Promise<void> {
    const v = [call.callId, ctx.runId, ctx.pipeline, call.endpointId, call.method, call.path].map(sqlString).join(', ');
    await wh.run(
      `INSERT INTO ledger (call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id, charge_cny, refund_cny, cost_usd, balance_cny, tasks, called_at, task_id, charge_estimated)
       VALUES (${v}, NULL, NULL, NULL, 0, NULL, NULL, ${Math.trunc(call.tasksSent)}, ${sqlString(call.at.toISOString())}::TIMESTAMPTZ, NULL, false)`,
    );
  },

  /** Removes the row of a call announced as sending (RawLanding.sending) that made no connection. */
  async unsent(wh: Warehouse, callId: string): Promise<void> {
    await wh.run(`DELETE FROM ledger WHERE ${SENT_UNANSWERED} AND call_id = $1`, [callId]);
  },

  /** The calls of a reindexed temp table (`reindexRaw`'s `_reindexed`) the ledger does not hold; callbacks get none. */
  async reindexedCalls(wh: Warehouse, source: string): Promise<void> {
    // A POST landed and killed before its rows were committed: its answer replaces the row
    // written before it was sent (and any estimate of it).
    await wh.run(`DELETE FROM ledger WHERE ${SENT_UNANSWERED} AND call_id IN (SELECT call_id FROM ${source} WHERE NOT callback AND http_status IS NOT NULL)`);
    await wh.run(`
      INSERT INTO ledger (call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id, charge_cny, refund_cny, cost_usd, balance_cny, tasks, called_at, task_id, charge_estimated)
      SELECT call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id, charge_cny::DECIMAL(18,6), coalesce(refund_cny, '0')::DECIMAL(18,6),
             cost_usd::DECIMAL(18,6), balance_cny::DECIMAL(18,6), coalesce(tasks_sent, 0), received_at, NULL, false
      FROM ${source} WHERE NOT callback AND call_id NOT IN (SELECT call_id FROM ledger WHERE call_id IN (SELECT call_id FROM ${source}))`);
  },

  /** Refund rows of collected tasks whose net cost is below their cost when posted (see above). */
  async refunds(wh: Warehouse, rows: readonly CollectedCost[]): Promise<void> {
    if (rows.length === 0) return;
    await runColumns(
      wh,
      `${REFUNDS_FROM('(SELECT unnest($1::VARCHAR[]) AS task_id, unnest($2::VARCHAR[])::DECIMAL(18,6) AS net_usd, unnest($3::VARCHAR[])::TIMESTAMPTZ AS seen_at)')}`,
      [varchars(rows.map((r) => r.taskId)), varchars(rows.map((r) => r.costUsd.toFixed(6))), varchars(rows.map((r) => r.seenAt.toISOString()))],
    );
  },

  /**
   * Lost POSTs left unpriced (their tasks were found by tag before any answered charge gave a
   * CNY/USD ratio: a budget's first task alone, whose answer was lost), priced once a ratio
   * exists, as estimateLost prices them; and the refunds of their collected tasks, which could
   * not be measured against an unknown charge, read from their landed answers. Nothing to do on
   * a night without such a row: one look at the ledger.
   */
  async priceLostLater(wh: Warehouse): Promise<{ callId: string; chargeCny: string | null; costUsd: string }[]> {
    const lost = await wh.all<{ c: string }>(`SELECT call_id AS c FROM ledger WHERE http_status IS NULL AND charge_cny IS NULL AND task_id IS NULL`);
    if (lost.length === 0) return [];
    const priced = (await this.estimateLost(wh, lost.map((r) => r.c))).filter((p) => p.chargeCny !== null && Number(p.chargeCny) > 0);
    if (priced.length === 0) return priced;
    const tasks = `(SELECT task_id FROM tasks WHERE task_id IS NOT NULL AND post_call_id IN (SELECT unnest(${sqlList(priced.map((p) => p.callId))}::VARCHAR[])))`;
    const files = await wh.all<{ f: string }>(
      `SELECT DISTINCT file AS f FROM (SELECT file, unnest(task_ids) AS task_id FROM raw_responses WHERE parsed) WHERE task_id IN ${tasks} ORDER BY 1`,
    );
    if (files.length === 0) return priced;
    const ids = await wh.all<{ t: string }>(`SELECT task_id AS t FROM ${tasks}`);
    await this.refundsFrom(
      wh,
      `(SELECT c.task_id, c.net_usd, received_at::TIMESTAMPTZ AS seen_at FROM (
         SELECT unnest([{'task_id': x.id, 'net_usd': x.cost} FOR x IN coalesce(from_json(body -> 'tasks', '[{"id":"VARCHAR","status_code":"BIGINT","cost":"DECIMAL(18,6)","result":"JSON"}]'), [])
                        IF x.status_code = 20000 AND x.cost IS NOT NULL AND list_contains(${sqlList(ids.map((r) => r.t))}::VARCHAR[], x.id)]) AS c, received_at
         FROM read_json(${sqlList(files.map((r) => `${wh.dir}/${r.f}`))}, columns = {received_at: 'VARCHAR', body: 'JSON'}, format = 'newline_delimited')))`,
    );
    return priced;
  },

  /**
   * Refunds the service showed only in the balance (its `cost` and charge headers stay gross:
   * the spec says unused depth "is refunded to the balance", not how a client sees it), for the
   * given runs: one row per run and endpoint (`call_id` `refund:balance:<run_id>:<endpoint_id>`,
   * method `REFUND`, `task_id` `balance:<run_id>`, negative `charge_cny`, `refund_cny` the amount,
   * `called_at` the run's last balance), recomputed from scratch at each call (idempotent).
   *
   * Measured on the run's own balance chain: its calls in ledger order (as `pipeline reconcile`
   * reads them), from the account's last balance before the run (another run's call), the last
   * `X-Svc-Balance-CNY` less the first plus every charge in between is what came back to the
   * account over the run's span. Less the refund rows already known there
   * (task-cost refunds of the run's tasks, and any seen in the span), the rest is attributed to the
   * run only up to what its own tasks could have been refunded: collected tasks with `depth`
   * above 10 (the spec prices depth past 10 per block) that returned fewer rows than their
   * `depth` and whose `cost` showed no refund, at their gross CNY (their POST's CNY/USD ratio).
   * So under the task-cost reading nothing is added (no double count), a top-up or another
   * tool's refund in the span is not taken for the run's, and another tool's charge in the span
   * makes the figure smaller, never larger (spend overstated, which reconcile then reports).
   * Returns the CNY recorded per run.
   */
  async balanceRefunds(wh: Warehouse, runIds: readonly string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    if (runIds.length === 0) return out;
    const runs = `(SELECT unnest(${sqlList([...new Set(runIds)])}::VARCHAR[]) AS run_id)`;
    await wh.run(`DELETE FROM ledger WHERE call_id LIKE 'refund:balance:%' AND run_id IN ${runs}`);
    const rows = await wh.all<{ run_id: string; amount: string }>(
      `INSERT INTO ledger (call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id, charge_cny, refund_cny, cost_usd, balance_cny, tasks, called_at, task_id, charge_estimated)
       WITH own AS (
         SELECT l.* FROM ledger AS l JOIN runs AS r USING (run_id)
         WHERE l.run_id IN ${runs} AND l.task_id IS NULL AND coalesce(r.key_kind, '') <> 'sandbox'),
       starts AS (SELECT run_id, min(called_at) AS t0 FROM own GROUP BY run_id),
       -- The account's last balance before the run: a refund that lands before the run's first
       -- answer (a resumed run, its POST's answer lost) is still between two balances.
       anchor AS (
         SELECT s.run_id, a.call_id FROM starts AS s,
         LATERAL (SELECT p.call_id FROM ledger AS p JOIN runs AS pr ON pr.run_id = p.run_id
                  WHERE p.task_id IS NULL AND p.balance_cny IS NOT NULL AND p.called_at < s.t0 AND coalesce(pr.key_kind, '') <> 'sandbox'
                  ORDER BY p.called_at DESC, p.call_id DESC LIMIT 1) AS a),
       c AS (
         SELECT run_id, coalesce(charge_cny, 0) AS ch, balance_cny AS bal, called_at,
                row_number() OVER (PARTITION BY run_id ORDER BY called_at, call_id) AS k
         FROM (SELECT run_id, call_id, charge_cny, balance_cny, called_at FROM own
               UNION ALL SELECT an.run_id, l.call_id, l.charge_cny, l.balance_cny, l.called_at FROM anchor AS an JOIN ledger AS l USING (call_id))),
       e AS (SELECT run_id, min(k) FILTER (WHERE bal IS NOT NULL) AS k0, max(k) FILTER (WHERE bal IS NOT NULL) AS k1 FROM c GROUP BY run_id),
       span AS (
         SELECT c.run_id,
                max(c.bal) FILTER (WHERE c.k = e.k1) - max(c.bal) FILTER (WHERE c.k = e.k0) + coalesce(sum(c.ch) FILTER (WHERE c.k > e.k0 AND c.k <= e.k1), 0) AS back,
                max(c.called_at) FILTER (WHERE c.k = e.k0) AS first_at, max(c.called_at) FILTER (WHERE c.k = e.k1) AS last_at
         FROM c JOIN e USING (run_id) WHERE e.k1 > e.k0 GROUP BY c.run_id),
       known AS (
         SELECT s.run_id, s.back, s.last_at, coalesce(sum(r.refund_cny), 0) AS known
         FROM span AS s LEFT JOIN ledger AS r
           ON r.task_id IS NOT NULL AND r.call_id NOT LIKE 'refund:balance:%' AND (r.run_id = s.run_id OR r.called_at BETWEEN s.first_at AND s.last_at)
         GROUP BY s.run_id, s.back, s.last_at),
       cap AS (
         SELECT t.run_id, t.endpoint_id, any_value(t.pipeline) AS pipeline, any_value(p.path) AS path,
                sum(round(t.cost_usd * p.charge_cny / p.cost_usd, ${REFUND_DECIMALS})) AS cap
         FROM tasks AS t JOIN ledger AS p ON p.call_id = t.post_call_id
         WHERE t.run_id IN ${runs} AND t.state = 'collected' AND t.task_id IS NOT NULL
           AND try_cast(t.spec ->> 'depth' AS INTEGER) > 10 AND coalesce(t.rows_loaded, 0) < try_cast(t.spec ->> 'depth' AS INTEGER)
           AND t.cost_usd > 0 AND p.charge_cny > 0 AND p.cost_usd > 0
           AND NOT EXISTS (SELECT 1 FROM ledger AS r WHERE r.call_id = 'refund:' || t.task_id)
         GROUP BY t.run_id, t.endpoint_id),
       share AS (
         SELECT cap.*, k.last_at, round(k.back - k.known, ${REFUND_DECIMALS}) AS owed,
                coalesce(sum(cap.cap) OVER (PARTITION BY cap.run_id ORDER BY cap.cap DESC, cap.endpoint_id ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS before
         FROM cap JOIN known AS k USING (run_id))
       SELECT 'refund:balance:' || run_id || ':' || endpoint_id, run_id, pipeline, endpoint_id, 'REFUND', path, NULL, NULL, -a.cny, a.cny, NULL, NULL, 0, last_at,
              'balance:' || run_id, false
       FROM share, LATERAL (SELECT least(cap, greatest(0, owed - before))::DECIMAL(18,6) AS cny) AS a
       WHERE owed >= 0.0001 AND a.cny > 0
       RETURNING run_id, refund_cny::VARCHAR AS amount`,
    );
    for (const r of rows) out.set(r.run_id, addDecimals(out.get(r.run_id) ?? '0', r.amount));
    return out;
  },

  /** Refund rows from a relation with `task_id`, `net_usd` and `seen_at` (the reindex reads them from the bodies). */
  async refundsFrom(wh: Warehouse, relation: string): Promise<void> {
    await wh.run(REFUNDS_FROM(relation));
  },
};

/**
 * The refund rows of a relation of collected costs, each task once, never twice. The look for
 * refunds already recorded reads only the ledger rows of the relation's tasks: a NOT IN over
 * every ledger row would build a hash table of a year of call ids at each landing group.
 */
function REFUNDS_FROM(relation: string): string {
  return `
    INSERT INTO ledger (call_id, run_id, pipeline, endpoint_id, method, path, http_status, request_id, charge_cny, refund_cny, cost_usd, balance_cny, tasks, called_at, task_id, charge_estimated)
    SELECT 'refund:' || t.task_id, t.run_id, t.pipeline, t.endpoint_id, 'REFUND', p.path, NULL, NULL, -r.cny, r.cny, -(t.cost_usd - g.net_usd), NULL, 0, g.seen_at, t.task_id, coalesce(p.charge_estimated, false)
    FROM (SELECT * FROM ${relation} QUALIFY row_number() OVER (PARTITION BY task_id ORDER BY seen_at) = 1) AS g
    JOIN tasks t ON t.task_id = g.task_id
    JOIN ledger p ON p.call_id = t.post_call_id,
    LATERAL (SELECT round((t.cost_usd - g.net_usd) * p.charge_cny / p.cost_usd, ${REFUND_DECIMALS})::DECIMAL(18,6) AS cny) AS r
    WHERE g.net_usd < t.cost_usd AND p.charge_cny > 0 AND p.cost_usd > 0 AND r.cny > 0
      AND 'refund:' || t.task_id NOT IN (SELECT call_id FROM ledger WHERE call_id IN (SELECT 'refund:' || task_id FROM ${relation}))
    QUALIFY row_number() OVER (PARTITION BY t.task_id ORDER BY t.posted_at) = 1`;
}

/** Sums two decimal strings of at most six decimals exactly (micro units). */
function addDecimals(a: string, b: string): string {
  const m = (v: string) => {
    const neg = v.startsWith('-');
    const [i, f = ''] = v.replace('-', '').split('.');
    const x = BigInt(i || '0') * 1_000_000n + BigInt((f + '000000').slice(0, 6));
    return neg ? -x : x;
  };
  const t = m(a) + m(b);
  const abs = t < 0n ? -t : t;
  return `${t < 0n ? '-' : ''}${abs / 1_000_000n}.${String(abs % 1_000_000n).padStart(6, '0')}`;
}
