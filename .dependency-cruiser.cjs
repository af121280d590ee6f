// The import graph's rules (README § Layers): `npm run deps`, part of `npm run lint`.
// Type-only imports count like any other: a circle of types is still a circle for the reader.

/** Leaves either side of the routers may read: the parsed environment and the logger. */
const SHARED_LEAVES = '^server/(config|logger|log-errors)[.]ts$';

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Two modules reach each other through imports: one of them belongs in a lower layer.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'db-stays-below',
      severity: 'error',
      comment: 'db/ knows nothing of the routers or the server.',
      from: { path: '^db/' },
      to: { path: '^(routers|server)/' },
    },
    {
      name: 'routers-see-only-the-trpc-layer',
      severity: 'error',
      comment: 'A router reads the base procedures, the error catalogue and the context (server/trpc/), never the app.',
      from: { path: '^routers/' },
      to: { path: '^server/', pathNot: '^server/trpc/' },
    },
    {
      name: 'trpc-layer-stays-below-the-routers',
      severity: 'error',
      comment: 'server/trpc/ is what a procedure needs: it imports neither the routers nor anything above them.',
      from: { path: '^server/trpc/' },
      to: { path: '^(routers/|server/)', pathNot: ['^server/trpc/', SHARED_LEAVES] },
    },
    {
      name: 'trpc-layer-knows-no-express',
      severity: 'error',
      comment: 'Express, its adapters and the access log belong to server/http/.',
      from: { path: '^server/trpc/' },
      to: { path: '^node_modules/(express|@types/express|pino-http)/' },
    },
    {
      name: 'shared-leaves-are-leaves',
      severity: 'error',
      comment: 'The configuration and the logger import nothing of the server but each other.',
      from: { path: SHARED_LEAVES },
      to: { path: '^(routers|server)/', pathNot: SHARED_LEAVES },
    },
    {
      name: 'http-layer-only-from-the-composition-root',
      severity: 'error',
      comment: 'server/http/ wires the layers below; only the start (main.ts), the CLIs and tests import it.',
      from: { pathNot: '^(server/(http/|cli/|main[.]ts)|test/|bench/|scripts/)' },
      to: { path: '^server/http/' },
    },
    {
      name: 'sdk-package-is-self-contained',
      severity: 'error',
      comment: "The partner's package ships sdk/src alone: it imports nothing of the service.",
      from: { path: '^sdk/src/' },
      to: { path: '^(?!sdk/src/)[^/]+/', pathNot: '^node_modules/' },
    },
  ],
  options: {
    doNotFollow: { path: '^node_modules/' },
    exclude: { path: '^(test/sdk/consumer|sdk/dist|dist)/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
  },
};
