/**
 * The arrows of ../shared/design.md, checked by `npm test` (`npm run lint:deps`): which stage
 * of src/ may import which. A stage may always import itself, src/errors.ts, Node's built-ins
 * and npm packages. The never-rules are spelled out: the emulator imports no other stage (it
 * reads the spec on its own, src/sandbox/spec, so a misreading in the client's catalog cannot
 * pass its tests);
 * the client knows no storage; the warehouse calls nobody; the catalog is data; the report
 * does not import the emulator; no stage imports the CLI.
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
  run: ['catalog', 'jobs', 'config', 'plan', 'client', 'collect', 'warehouse', 'lake', 'models', 'alerts'],
  sandbox: [],
  cli: ['catalog', 'jobs', 'config', 'plan', 'client', 'collect', 'warehouse', 'lake', 'models', 'alerts', 'report', 'run', 'sandbox'],
};

const STAGES = Object.keys(MAY_IMPORT);

/**
 * Folders of a stage that a lower stage may also import, for the data they declare: the alert
 * rules (each rule's key and value schema, read by the config's `alerts:` block). Such a folder
 * imports nothing else of src/ (the rule below), so the arrow carries nothing with it.
 */
const SHARED = { config: ['^src/alerts/rules/'] };

module.exports = {
  forbidden: [
    ...STAGES.map((stage) => ({
      name: `${stage}-imports-only-${MAY_IMPORT[stage].join('-') || 'itself'}`,
      comment: `src/${stage} may import ${MAY_IMPORT[stage].length ? MAY_IMPORT[stage].map((s) => `src/${s}`).join(', ') : 'no other stage'} (../shared/design.md)`,
      severity: 'error',
      from: { path: `^src/${stage}/` },
      to: { path: '^src/[^/]+/', pathNot: [`^src/(${[stage, ...MAY_IMPORT[stage]].join('|')})/`, ...(SHARED[stage] ?? [])] },
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
