// typescript-eslint's recommended preset everywhere, plus the rule that matters structurally:
// nothing outside src/extension/ may import `vscode`, so the engine, CLI and tests run without VS
// Code (DESIGN.md, "Rooms"). The extension is also linted with type information, for
// no-floating-promises: a promise nobody awaits in the extension host fails silently.
import tseslint from 'typescript-eslint';

const noVscode = {
  'no-restricted-imports': ['error', {
    paths: [{ name: 'vscode', message: 'Only src/extension/ may import vscode (DESIGN.md rooms).' }],
  }],
};

export default tseslint.config(
  { ignores: ['dist/**', 'out/**', 'node_modules/**', '.vscode-it/**', 'media/vendor/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    rules: {
      ...noVscode,
      // `_name` marks a value deliberately left unused (destructuring it away, a required parameter).
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_' }],
      'no-debugger': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
  {
    files: ['src/extension/**/*.ts'],
    ignores: ['src/extension/dashboard/webview/**'],
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: { '@typescript-eslint/no-floating-promises': 'error' },
  },
  {
    files: ['test/vscode/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
  {
    // The extension may import vscode, and no engine file: it starts the engine as a process and
    // reads runs through the run store (src/archive).
    files: ['src/extension/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { patterns: [{ group: ['**/engine/*'], message: 'The extension imports no engine file: it reads runs through src/archive.' }] }],
    },
  },
  {
    // Tests poke at JSON of any shape.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
);
