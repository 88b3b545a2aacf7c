// Choice lists shared by the command descriptions (commandSpecs.ts) and the commands that check them.
// METHOD_CHOICES, CONNECT_KIND_CHOICES and RAY_TEMPLATE_CHOICES repeat lists that live in heavy modules
// (config schema, backends), so --help need not load those; test/unit/cli-product.test.ts keeps them equal.
export const TEMPLATES = ['standard', 'tiny'] as const;
export const METHOD_CHOICES = ['whale', 'adaptive', 'stagewise', 'weight-only', 'harness-only', 'fst'] as const;
export const CONNECT_KIND_CHOICES = ['embedded', 'openai-compatible', 'tinker', 'split'] as const;
export const RAY_TEMPLATE_CHOICES = ['embedded', 'vllm', 'skyrl-tinker'] as const;
