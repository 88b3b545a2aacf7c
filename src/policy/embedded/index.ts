/**
 * The embedded policy backend: a small word-level transformer on tfjs-wasm, sampled with continuous
 * batching and a KV cache, trained with real RSFT steps, served OpenAI-style. Importing this module
 * is cheap: tfjs loads on `loadTf()` / `EmbeddedBackend.open()`.
 */
export { AdapterError, EmbeddedBackend, UnknownVersionError, defaultBaseModelDir, type EmbeddedBackendOptions } from './backend.js';
export { DEFAULT_MODEL_CONFIG, modelConfig, parameterCount, paramSpecs, validateConfig, type ModelConfig, type ParamSpec } from './config.js';
export { TransformerModel, createModel, weightsVersionId, type EmbeddingMode } from './model.js';
export {
  BatchSampler,
  ContextLengthError,
  SamplerClosedError,
  type GenerateRequest,
  type GenerateResult,
  type SamplerOptions,
  type SamplerStats,
} from './sampler.js';
export { startEmbeddedServer, type EmbeddedServer, type ServableBackend } from './server.js';
export { MODEL_FILES, VersionStore, folderVersionId, loadModelFolder, saveModelFolder, type LoadedVersion, type VersionMeta } from './store.js';
export { loadTf } from './tf.js';
export { SPECIAL_TOKENS, WordTokenizer, buildVocabulary, loadTokenizer, pretokenize, type BuildVocabularyOptions, type VocabularyJson } from './tokenizer.js';
export {
  DEFAULT_ADAM,
  computeGradients,
  Trainer,
  pretrainSequences,
  rsftSequences,
  trainRsft,
  transcriptToSequence,
  type AdamOptions,
  type AdamState,
  type StepResult,
  type TrainerOptions,
  type WeightedSequence,
} from './trainer.js';
