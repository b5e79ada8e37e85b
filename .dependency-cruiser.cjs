/**
 * The arrows of ../shared/design.md, checked by `npm test` (`npm run lint:deps`): which stage
 * of src/ may import which. A stage may always import itself, src/errors.ts, Node's built-ins
 * and npm packages. The never-rules are spelled out: the emulator imports no other stage (it
 * reads the spec on its own, src/sandbox/spec, so a misreading in the client's catalog cannot
 * pass its tests);
 * the client knows no storage; the warehouse calls nobody; the catalog is data; the report
 * does not import the emulator; no stage imports the CLI.
 * Posting (src/post), the scheduler (src/schedule) and finance/operations (src/ops: reconcile,
 * ledger reports, doctor, status) are stages of their own: the run posts through post, the
 * scheduler starts runs, ops reads what runs left; none of them is imported by the run's
 * lower stages, and nothing but the CLI imports schedule or ops.
 * A stage is imported only through its index.ts: an import from src/A/... into another stage
 * src/B/ names src/B/index.ts, so a stage's files can move and split without its importers
 * knowing. The few exceptions are listed in ENTRY_EXCEPTIONS with why.
 */
const MAY_IMPORT = {
  catalog: [],
  jobs: ['catalog'],
  config: ['catalog', 'jobs'],
  client: ['catalog'],
  warehouse: ['catalog'],
  lake: ['catalog', 'warehouse'],
  plan: ['catalog', 'jobs', 'config', 'warehouse'],
  collect: ['catalog', 'config', 'client', 'warehouse'],
  models: ['catalog', 'warehouse'],
  alerts: ['catalog', 'config', 'warehouse', 'models'],
  report: ['catalog', 'config', 'warehouse', 'models'],
  post: ['catalog', 'jobs', 'config', 'plan', 'client', 'collect', 'warehouse'],
  run: ['catalog', 'jobs', 'config', 'plan', 'client', 'collect', 'warehouse', 'lake', 'models', 'alerts', 'post'],
  schedule: ['config', 'warehouse', 'run'],
  ops: ['catalog', 'config', 'plan', 'client', 'warehouse', 'lake', 'post'],
  sandbox: [],
  cli: [
    'catalog',
    'jobs',
    'config',
    'plan',
    'client',
    'collect',
    'warehouse',
    'lake',
    'models',
    'alerts',
    'report',
    'post',
    'run',
    'schedule',
    'ops',
    'sandbox',
  ],
};

const STAGES = Object.keys(MAY_IMPORT);

/**
 * Folders of a stage that a lower stage may also import, for the data they declare: the alert
 * rules (each rule's key and value schema, read by the config's `alerts:` block). Such a folder
 * imports nothing else of src/ (the rule below), so the arrow carries nothing with it.
 */
const SHARED = { config: ['^src/alerts/rules/'] };

/**
 * Files of a stage that another stage may import past its index.ts, each for a reason the index
 * cannot serve: `from` the importing files, `to` the file imported.
 */
const ENTRY_EXCEPTIONS = [
  // The CLI builds every command's options (choices, defaults, checks) at start-up, before any
  // command runs: these small modules give it those values, where the stages' index.ts would load
  // the whole stage (the emulator, the report's renderer, zod) into `pipeline --help`.
  { from: '^src/cli/', to: '^src/sandbox/(clock|readings|rank-walk|faults/fault-profile)\\.ts$' },
  { from: '^src/cli/', to: '^src/report/scope\\.ts$' },
  { from: '^src/cli/', to: '^src/config/messages\\.ts$' },
  // The config's `alerts:` block reads each rule's key and value schema (SHARED above).
  { from: '^src/config/', to: '^src/alerts/rules/index\\.ts$' },
];

module.exports = {
  forbidden: [
    ...STAGES.map((stage) => ({
      name: `${stage}-imports-only-${MAY_IMPORT[stage].join('-') || 'itself'}`,
      comment: `src/${stage} may import ${MAY_IMPORT[stage].length ? MAY_IMPORT[stage].map((s) => `src/${s}`).join(', ') : 'no other stage'} (../shared/design.md)`,
      severity: 'error',
      from: { path: `^src/${stage}/` },
      to: { path: '^src/[^/]+/', pathNot: [`^src/(${[stage, ...MAY_IMPORT[stage]].join('|')})/`, ...(SHARED[stage] ?? [])] },
    })),
    ...STAGES.map((stage) => ({
      name: `${stage}-imported-through-its-index`,
      comment: `another stage imports src/${stage} only through src/${stage}/index.ts`,
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: `^src/${stage}/` },
      to: {
        path: `^src/${stage}/`,
        pathNot: [`^src/${stage}/index\\.ts$`, ...ENTRY_EXCEPTIONS.filter((e) => e.to.startsWith(`^src/${stage}/`)).map((e) => e.to)],
      },
    })),
    ...ENTRY_EXCEPTIONS.filter((e) => e.from !== '^src/').map((e) => ({
      name: 'entry-exception-only-where-listed',
      comment: `${e.to} may be imported past its stage's index.ts from ${e.from} only (ENTRY_EXCEPTIONS)`,
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: [e.from, e.to.replace(/^(\^src\/[^/]+\/).*$/, '$1')] },
      to: { path: e.to },
    })),
    {
      name: 'alert-rules-import-only-themselves',
      comment: 'src/alerts/rules is read by src/config: it imports nothing else of src/',
      severity: 'error',
      from: { path: '^src/alerts/rules/' },
      to: { path: '^src/', pathNot: '^src/alerts/rules/' },
    },
    {
      name: 'unknown-stage',
      comment: 'every folder of src/ is a stage named in .dependency-cruiser.cjs; add a new one there with its arrows',
      severity: 'error',
      from: { path: '^src/[^/]+/', pathNot: `^src/(${STAGES.join('|')})/` },
      to: {},
    },
    {
      name: 'src-does-not-import-tests-or-benches',
      comment: 'src/ is the product: test, bench and script helpers live outside it and import it, never the reverse',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(test|bench|scripts)/' },
    },
    {
      name: 'no-stage-cycles',
      comment: 'a module cycle across stages means a stage depends on one that depends on it',
      severity: 'error',
      from: { path: '^src/([^/]+)/' },
      to: { circular: true, path: '^src/', pathNot: '^src/$1/' },
    },
  ],
  options: {
    // TypeScript 7 has no compiler API: swc parses the sources; tsconfig maps './x.js' to './x.ts'.
    parser: 'swc',
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^src/report/page/' },
  },
};
