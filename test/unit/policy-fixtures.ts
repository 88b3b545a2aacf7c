/** Shared small fixtures for the embedded-policy tests: a tiny vocabulary and model config. */
import { buildVocabulary, type WordTokenizer } from '../../src/policy/embedded/tokenizer.js';
import { modelConfig, type ModelConfig } from '../../src/policy/embedded/config.js';

export const WORDS = ['count', 'a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', 'hello', 'world', 'search', 'answer', 'the', 'is'];

export function tinyTokenizer(): WordTokenizer {
  return buildVocabulary({ requiredWords: WORDS, corpus: ['hello world, the answer is 42.'], maxSize: 320, minCount: 1 });
}

export function tinyConfig(vocabSize: number, overrides: Partial<ModelConfig> = {}): ModelConfig {
  return modelConfig(vocabSize, { dModel: 32, nLayers: 2, nHeads: 2, contextLength: 64, mlpRatio: 2, ...overrides });
}
