// Environment boundaries are enforced here (Signal Desktop style): only main/ may touch
// Electron, the server stays a plain Node library, the renderer reaches the server over HTTP
// and may import nothing from server/ except the shared zod schemas.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';
import reactHooks from 'eslint-plugin-react-hooks';

const electronBan = {
  paths: [{ name: 'electron', message: 'Only main/ may import electron: the server must run headless under plain Node.' }],
  patterns: [{ group: ['electron/*'], message: 'Only main/ may import electron.' }],
};

// The database drivers belong to server/db/ and the repositories (issue 19's storage seam).
const driverBan = [
  { group: ['better-sqlite3', 'pg', 'kysely'], message: 'The database driver is used only in server/db/ and repositories (repo.ts, *Repo.ts, *Storage.ts, *Writer.ts).' },
];

// A server feature reaches another only through its public face (docs/architecture.md).
const featureFace = {
  regex: '^\\.\\./(?!\\.\\.)[^/]+/(?!index\\.ts$)',
  message: 'Import another server feature through its index.ts (its public face).',
};
// db/, platform/, http/ and schemas/ sit below the features (app.ts wires features together).
const belowFeatures = { regex: '(^|/)features/', message: 'db/, platform/, http/ and schemas/ sit below the features: they import none.' };

// The nodes feature is the one writer of the `nodes` table (issue 19): other code changes nodes
// through its public face (NodeService methods taking `tx`, nodes/scanCountRepo.ts). The sync
// apply path writes replicated rows of every synced table by a table name it looks up
// (sync/repo.ts, ENTITY_TABLES), which this rule cannot see and docs/architecture.md names.
const NODES_WRITE = '(UPDATE|INSERT\\s+(OR\\s+\\w+\\s+)?INTO|REPLACE\\s+INTO|DELETE\\s+FROM)\\s+nodes\\b';
const nodesWriterMessage = 'Only server/features/nodes/ writes the nodes table: call the nodes feature (its index.ts) instead.';
const nodesOneWriter = [
  { selector: "CallExpression[callee.property.name=/^(insertInto|updateTable|deleteFrom|replaceInto|mergeInto)$/][arguments.0.value=/^nodes(\\s|$)/]", message: nodesWriterMessage },
  { selector: `TemplateElement[value.raw=/${NODES_WRITE}/i]`, message: nodesWriterMessage },
  { selector: `Literal[value=/${NODES_WRITE}/i]`, message: nodesWriterMessage },
];

export default tseslint.config(
  { ignores: ['node_modules/', 'out/', 'dist/', '.tools/', 'test-results/', 'playwright-report/', 'data/', 'test/contract/typed-client/generated/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-restricted-imports': ['error', electronBan],
    },
  },
  {
    // Property tests run with the fixed seed of test/support/fast-check.ts, so a CI failure
    // replays; test/sync pins a seed per case itself.
    files: ['server/**/*.test.ts', 'test/**/*.ts'],
    ignores: ['test/support/fast-check.ts', 'test/sync/**'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [...electronBan.paths, { name: 'fast-check', allowTypeImports: true, message: 'Import fc from test/support/fast-check.ts (fixed seed).' }],
        patterns: electronBan.patterns,
      }],
    },
  },
  {
    files: ['main/**'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // Server features are independent (docs/architecture.md): one imports another only through
    // that feature's public face, its index.ts.
    files: ['server/features/**'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: electronBan.paths,
        patterns: [
          ...electronBan.patterns,
          featureFace,
          ...driverBan,
        ],
      }],
    },
  },
  {
    // Repositories hold the SQL: they may use the driver and the query builder. So does the scan
    // path's per-dialect storage: its SQLite half is hand-written on better-sqlite3 for speed
    // (writer, sink, checkpointer worker, and the handler that takes the connection; docs/scans.md).
    files: [
      'server/features/**/repo.ts',
      'server/features/**/*Repo.ts',
      'server/features/**/*Storage.ts',
      'server/features/**/*Writer.ts',
      'server/features/scans/writer.ts',
      'server/features/scans/sink.ts',
      'server/features/scans/checkpointer.worker.ts',
      'server/features/scans/handler.ts',
      'server/features/**/*.test.ts',
    ],
    rules: {
      'no-restricted-imports': ['error', {
        paths: electronBan.paths,
        patterns: [
          ...electronBan.patterns,
          featureFace,
        ],
      }],
    },
  },
  {
    files: ['server/**/*.ts'],
    ignores: ['server/features/nodes/**', '**/*.test.ts'],
    rules: { 'no-restricted-syntax': ['error', ...nodesOneWriter] },
  },
  {
    // db/, platform/, http/ and schemas/ sit below the features (app.ts wires features together).
    files: ['server/db/**/*.ts', 'server/platform/**/*.ts', 'server/http/**/*.ts', 'server/schemas/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: electronBan.paths,
        patterns: [
          ...electronBan.patterns,
          belowFeatures,
        ],
      }],
    },
  },
  {
    // Outside db/ and the repositories, nothing touches the database driver.
    files: ['server/platform/**/*.ts', 'server/http/**/*.ts', 'server/schemas/**/*.ts'],
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: electronBan.paths,
        patterns: [
          ...electronBan.patterns,
          belowFeatures,
          ...driverBan,
        ],
      }],
    },
  },
  {
    // The storage seam made repositories and services async (docs/architecture.md): a promise
    // nobody awaits is a write that may land after its transaction, or an error nobody sees.
    files: ['server/**/*.ts', 'main/**/*.ts', 'test/**/*.ts'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
    },
  },
  {
    files: ['renderer/**'],
    languageOptions: { globals: { ...globals.browser } },
    plugins: { 'react-hooks': reactHooks },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'no-restricted-imports': ['error', {
        paths: electronBan.paths,
        patterns: [
          ...electronBan.patterns,
          {
            regex: '^(\\.\\./)+server/(?!schemas/)',
            message: 'The renderer talks to the server over HTTP only; it may import only server/schemas/.',
          },
        ],
      }],
    },
  },
  {
    // Features are independent (bulletproof-react): shared code lives in renderer/components or
    // renderer/lib, and renderer/app composes features.
    files: ['renderer/features/**'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: electronBan.paths,
        patterns: [
          ...electronBan.patterns,
          {
            regex: '^(\\.\\./)+server/(?!schemas/)',
            message: 'The renderer talks to the server over HTTP only; it may import only server/schemas/.',
          },
          {
            regex: '^\\.\\./(?!\\.\\./)|^(\\.\\./)+features/|^\\.\\./\\.\\./app/',
            message: 'A feature may not import another feature or the app: share through renderer/components or renderer/lib.',
          },
        ],
      }],
    },
  },
);
