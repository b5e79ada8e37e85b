import {
  closeSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { StoredTask, TaskStore } from './task-store.js';
import type { SandboxWorld } from './world.js';

/** The journal's format; a file of another version is refused rather than misread. */
const VERSION = 1;
const DAY_MS = 24 * 3600 * 1000;
/** Uncollected tasks posted longer ago than this (emulator clock) are dropped when the journal is rewritten: `id_list` looks back a month. */
const KEEP_MS = 40 * DAY_MS;
/** Collected tasks, and calls, are kept this long: the ready list's window (a re-parse is listed for a day). */
const KEEP_DONE_MS = 3 * DAY_MS;

/** One call the emulator answered after processing it: the ledger of charges (and `user_data`'s statistics). */
export interface JournalCall {
  /** Emulator clock, ms. */
  at: number;
  method: string;
  path: string;
  api: string;
  fn: string;
  http: number;
  /** CNY units charged (0 for free calls and sandbox keys). */
  units: number;
  requestId: string;
}

/** What a journal holds when read back: the account, the tasks (latest form of each) and the calls. */
export interface JournalState {
  balanceUnits: number;
  totalUnits: number;
  tasks: StoredTask[];
  calls: JournalCall[];
}

type Line =
  | { k: 'hello'; v: number; seed: number }
  | { k: 'acct'; bal: number; tot: number }
  | { k: 'task'; t: StoredTask }
  | { k: 'call'; c: JournalCall };

/**
 * The built-in emulator's memory on disk (`startSandbox({ stateDir })`), so a process that
 * ends (Ctrl-C, SIGKILL) does not take the service's side of the night with it: an
 * append-only NDJSON file, one line per change (a task created or moved on, the balance, a
 * call answered), written (and fsynced, unless only a free call's statistics) before the answer leaves the emulator, so a client
 * never holds a task id the emulator could forget. Read back at start (the last line of each
 * task wins; a line torn by a kill is dropped), and rewritten then by rename, without what is
 * too old to be asked for (uncollected tasks after 40 days, collected ones and calls after 3). Results are not stored: they are rebuilt from the seed, the task and its
 * ready time, exactly as before.
 *
 * One file per seed (`emulator-seed<N>.ndjson`): another seed is another simulated world.
 * Two processes may share a folder (two `pipeline run` on one warehouse: the second waits for
 * the warehouse): each appends whole lines, and reads what the other appended before each
 * call; only a process that finds no other live owner (`owner.pid`) rewrites the file.
 */
export class SandboxJournal {
  readonly path: string;
  readonly #lockPath: string;
  #fd: number;
  /** Bytes of the file this process has read or written: what lies past it was appended by another process. */
  #offset = 0;
  #owner: boolean;
  #lastAcct = '';
  /** Keys seen on calls, by their hash: restored tasks hold the hash until their key calls. */
  readonly #keys = new Map<string, string>();

  private constructor(path: string, lockPath: string, fd: number, owner: boolean) {
    this.path = path;
    this.#lockPath = lockPath;
    this.#fd = fd;
    this.#owner = owner;
  }

  /**
   * Opens (creating) the journal of `seed` in `dir` and reads it back. `nowMs` (the emulator
   * clock) decides what is old enough to drop when the file is rewritten.
   */
  static open(dir: string, seed: number, nowMs: number): { journal: SandboxJournal; state: JournalState | undefined } {
    makeFolders(dir);
    const path = join(dir, `emulator-seed${seed}.ndjson`);
    const lockPath = join(dir, 'owner.pid');
    const owner = takeOwnership(lockPath);
    let text = '';
    try {
      text = readFileSync(path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    // A line torn by a kill (no newline yet) was never acknowledged to anyone: dropped.
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    const state = whole ? readLines(whole, path) : undefined;
    if (owner) {
      // Rewritten whole, without what is too old to be asked for again, then swapped in by rename.
      const keep = state ? prune(state, nowMs) : undefined;
      const lines = [JSON.stringify({ k: 'hello', v: VERSION, seed } satisfies Line)];
      if (keep) {
        lines.push(JSON.stringify({ k: 'acct', bal: keep.balanceUnits, tot: keep.totalUnits } satisfies Line));
        for (const t of keep.tasks) lines.push(taskLine(t));
        for (const c of keep.calls) lines.push(JSON.stringify({ k: 'call', c } satisfies Line));
      }
      const tmp = `${path}.tmp`;
      const body = `${lines.join('\n')}\n`;
      writeFileSync(tmp, body, { mode: 0o600 });
      const tfd = openSync(tmp, 'r');
      fsyncSync(tfd);
      closeSync(tfd);
      renameSync(tmp, path);
      syncDir(dir);
      const fd = openSync(path, 'a', 0o600);
      const journal = new SandboxJournal(path, lockPath, fd, true);
      journal.#offset = Buffer.byteLength(body);
      if (keep) journal.#lastAcct = `${keep.balanceUnits}/${keep.totalUnits}`;
      return { journal, state: keep };
    }
    const fd = openSync(path, 'a', 0o600);
    const journal = new SandboxJournal(path, lockPath, fd, false);
    journal.#offset = Buffer.byteLength(whole);
    if (!whole) journal.#append([JSON.stringify({ k: 'hello', v: VERSION, seed } satisfies Line)]);
    if (state) journal.#lastAcct = `${state.balanceUnits}/${state.totalUnits}`;
    return { journal, state };
  }

  /**
   * Lines another process appended since this one last read or wrote (a second emulator on
   * the same folder), read back as state to merge; undefined when there are none.
   */
  news(): JournalState | undefined {
    const size = fstatSync(this.#fd).size;
    if (size <= this.#offset) return undefined;
    const buf = Buffer.alloc(size - this.#offset);
    const rfd = openSync(this.path, 'r');
    try {
      readSync(rfd, buf, 0, buf.length, this.#offset);
    } finally {
      closeSync(rfd);
    }
    const text = buf.toString('utf8');
    const whole = text.slice(0, text.lastIndexOf('\n') + 1);
    if (!whole) return undefined;
    this.#offset += Buffer.byteLength(whole);
    return readLines(whole, this.path);
  }

  /**
   * Writes what changed in one step (tasks, the balance, the call answered) as whole lines
   * and fsyncs them: called before the answer is sent. Nothing to write, nothing done.
   */
  commit(tasks: Iterable<StoredTask>, balanceUnits: number, totalUnits: number, call?: JournalCall): void {
    const lines: string[] = [];
    for (const t of tasks) lines.push(taskLine(t));
    const acct = `${balanceUnits}/${totalUnits}`;
    if (acct !== this.#lastAcct) {
      lines.push(JSON.stringify({ k: 'acct', bal: balanceUnits, tot: totalUnits } satisfies Line));
      this.#lastAcct = acct;
    }
    // A free call that changed nothing is statistics only: written, not waited for on disk.
    const durable = lines.length > 0 || (call?.units ?? 0) > 0;
    if (call) lines.push(JSON.stringify({ k: 'call', c: call } satisfies Line));
    if (lines.length > 0) this.#append(lines, durable);
  }

  /**
   * A key that called: the restored tasks holding its hash hold the key again (the journal never
   * stores a key, so a task is its key's only once that key is seen). Once per key.
   */
  claim(key: string, store: TaskStore): void {
    const ref = keyRef(key);
    if (ref === key || this.#keys.has(ref)) return;
    this.#keys.set(ref, key);
    store.rekey(ref, key);
  }

  /** The key a journal line's key stands for, when that key has called; else the hash as read. */
  keyOf(ref: string): string {
    return this.#keys.get(ref) ?? ref;
  }

  /** Closes the file and gives up ownership of the folder. */
  close(): void {
    if (this.#fd < 0) return;
    closeSync(this.#fd);
    this.#fd = -1;
    if (this.#owner) {
      try {
        if (readFileSync(this.#lockPath, 'utf8').trim() === String(process.pid)) rmSync(this.#lockPath, { force: true });
      } catch {
        // already gone
      }
    }
  }

  #append(lines: string[], durable = true): void {
    const news = this.news(); // what another process appended is read before this process writes past it
    if (news) this.onNews?.(news);
    // Bytes past what was read are a line torn by a process killed mid-write: this write starts a line of its own.
    const size = fstatSync(this.#fd).size;
    const buf = Buffer.from(`${size > this.#offset ? '\n' : ''}${lines.join('\n')}\n`, 'utf8');
    let done = 0;
    while (done < buf.length) done += writeSync(this.#fd, buf, done, buf.length - done);
    if (durable) fsyncSync(this.#fd);
    this.#offset = size + buf.length;
  }

  /** Called with another process's lines found while appending (set by `startSandbox`). */
  onNews: ((state: JournalState) => void) | undefined;
}

/** Prefix of a key as the journal holds it: its SHA-256, never the key (keys are never stored). */
const KEY_REF = 'sha256:';

/** How the journal names a key: its hash (a task restored and not yet claimed already holds one). */
export function keyRef(key: string): string {
  return key.startsWith(KEY_REF) ? key : `${KEY_REF}${createHash('sha256').update(key).digest('hex')}`;
}

/**
 * A task's journal line: without its built result (rebuilt from the seed), its key as a hash,
 * and the secret of a callback URL (`.../<secret>/postback`) cut out, as the raw landing does.
 */
function taskLine(t: StoredTask): string {
  const { result: _result, resultAtMs: _at, resultText: _text, ...rest } = t;
  return redactCallbackSecrets(JSON.stringify({ k: 'task', t: { ...rest, key: keyRef(t.key) } } satisfies Line));
}

const CALLBACK_KIND = /(?:\\?\/)(?:postback|pingback)\b/g;
const SECRET_CHAR = /[A-Za-z0-9_-]/;
const MIN_SECRET = 16;

/**
 * The callback secrets of a push run (16 or more of A-Z, a-z, 0-9, `_`, `-` right before
 * `/postback` or `/pingback`) replaced by `***`: the same rule as src/redact.ts, which the
 * emulator may not import. A restored task's callback then fails and the task joins the ready
 * list, as it would anyway: the run that handed out the URL is gone.
 */
function redactCallbackSecrets(text: string): string {
  if (!text.includes('postback') && !text.includes('pingback')) return text;
  let out = '';
  let last = 0;
  for (const m of text.matchAll(CALLBACK_KIND)) {
    let start = m.index;
    while (start > last && SECRET_CHAR.test(text[start - 1]!)) start--;
    if (m.index - start >= MIN_SECRET) {
      out += `${text.slice(last, start)}***`;
      last = m.index;
    }
  }
  return out + text.slice(last);
}

function readLines(text: string, path: string): JournalState {
  const state: JournalState = { balanceUnits: NaN, totalUnits: NaN, tasks: [], calls: [] };
  const tasks = new Map<string, StoredTask>();
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    let line: Line;
    try {
      line = JSON.parse(raw) as Line;
    } catch {
      continue; // a line torn by a process killed while writing it: never acknowledged to a client
    }
    switch (line.k) {
      case 'hello':
        if (line.v !== VERSION) throw new Error(`${path}: journal version ${line.v}, this emulator reads version ${VERSION}`);
        break;
      case 'acct':
        state.balanceUnits = line.bal;
        state.totalUnits = line.tot;
        break;
      case 'task':
        tasks.delete(line.t.id); // re-inserted: the order is that of the latest change, fine for a Map's lookups
        tasks.set(line.t.id, line.t);
        break;
      case 'call':
        state.calls.push(line.c);
        break;
      default:
        break;
    }
  }
  state.tasks = [...tasks.values()].sort((a, b) => a.postedAtMs - b.postedAtMs);
  return state;
}

function prune(state: JournalState, nowMs: number): JournalState {
  return {
    ...state,
    tasks: state.tasks.filter((t) => t.postedAtMs >= nowMs - (t.collected ? KEEP_DONE_MS : KEEP_MS)),
    calls: state.calls.filter((c) => c.at >= nowMs - KEEP_DONE_MS),
  };
}

/** Takes `owner.pid` unless a live process holds it. */
function takeOwnership(lockPath: string): boolean {
  try {
    writeFileSync(lockPath, String(process.pid), { flag: 'wx', mode: 0o600 });
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const pid = Number(readFileSync(lockPath, 'utf8').trim());
  // Our own pid: another emulator of this process has the folder.
  if (Number.isInteger(pid) && pid > 0 && (pid === process.pid || alive(pid))) return false;
  writeFileSync(lockPath, String(process.pid), { mode: 0o600 }); // left by a process that is gone
  return true;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // not every platform syncs a directory
  }
}

/** Writes down what the last step changed (tasks, balance) and the call it answered, when the emulator is persisted. */
export function persistStep(world: SandboxWorld, call?: JournalCall): void {
  world.journal?.commit(world.store.takeChanged(), world.account.balanceUnits, world.account.totalUnits, call);
}

/**
 * Makes `dir` and the folders above it that are missing, one at a time: Node's `mkdirSync` with
 * `recursive` spins forever where no folder can be made (under /proc/1), so a bad warehouse path
 * would hang the run instead of failing.
 */
function makeFolders(dir: string): void {
  const missing: string[] = [];
  for (let d = dir; ; d = dirname(d)) {
    try {
      if (statSync(d).isDirectory()) break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    }
    missing.push(d);
    if (dirname(d) === d) break;
  }
  for (const d of missing.reverse()) {
    try {
      mkdirSync(d, { mode: 0o700 });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || !statSync(d).isDirectory()) throw err;
    }
  }
}
