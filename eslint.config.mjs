// The only rule that matters structurally: nothing outside src/extension/ may import `vscode`,
// so the engine, CLI and tests run without VS Code (DESIGN.md, "Rooms").
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
    languageOptions: { parser: tseslint.parser },
    plugins: { '@typescript-eslint': tseslint.plugin },
    rules: {
      ...noVscode,
      '@typescript-eslint/no-floating-promises': 'off',
      'no-debugger': 'error',
      'no-var': 'error',
      'prefer-const': 'error',
    },
  },
  {
    files: ['src/extension/**/*.ts', 'test/vscode/**/*.ts'],
    rules: { 'no-restricted-imports': 'off' },
  },
);
