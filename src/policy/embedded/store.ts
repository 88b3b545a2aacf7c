/**
 * Policy versions on disk. A version is a folder:
 *   config.json  — {format, modelConfig, tensors: [{name, shape}]}: the architecture and weights.bin's layout
 *   weights.bin  — all parameters, float32 little-endian, in canonical order
 *   vocab.json   — the tokenizer
 *   meta.json    — {version, parent, created, train?}: provenance and training statistics
 * The version id is the first 16 hex digits of sha256(weights.bin): the same weights give the same
 * id wherever they were produced. A store keeps versions as `<dir>/<id>/`, each written to a
 * temporary folder and renamed into place, so a reader never sees half a version. The shipped base
 * model (`resources/model/base/`) has the same layout.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import { writeFileAtomic, writeJsonAtomic } from '../../core/atomic.js';
import { paramSpecs, validateConfig, type ModelConfig } from './config.js';
import { TransformerModel, weightsVersionId } from './model.js';
import { WordTokenizer } from './tokenizer.js';

export const MODEL_FILES = ['config.json', 'weights.bin', 'vocab.json', 'meta.json'] as const;

export interface VersionMeta {
  version: string;
  /** The version this one was trained from; null for a from-scratch model. */
  parent: string | null;
  /** ISO time. */
  created: string;
  train?: Record<string, unknown>;
  note?: string;
}

interface ConfigFile {
  format: 'whale-embedded-model';
  formatVersion: 1;
  modelConfig: ModelConfig;
  tensors: { name: string; shape: number[] }[];
}

export interface LoadedVersion {
  version: string;
  model: TransformerModel;
  tokenizer: WordTokenizer;
  meta: VersionMeta;
}

/** Writes a model folder (files individually atomic). Returns the version id. */
export function saveModelFolder(
  folder: string,
  model: TransformerModel,
  tokenizer: WordTokenizer,
  meta: Omit<VersionMeta, 'version' | 'created'> & { created?: string },
): string {
  if (tokenizer.size !== model.config.vocabSize) {
    throw new Error(`cannot save: the tokenizer has ${tokenizer.size} tokens but the model was built for ${model.config.vocabSize}`);
  }
  const bytes = model.toBytes();
  const version = weightsVersionId(bytes);
  const config: ConfigFile = {
    format: 'whale-embedded-model',
    formatVersion: 1,
    modelConfig: model.config,
    tensors: model.specs.map((s) => ({ name: s.name, shape: s.shape })),
  };
  mkdirSync(folder, { recursive: true });
  writeFileAtomic(join(folder, 'weights.bin'), bytes);
  writeJsonAtomic(join(folder, 'config.json'), config);
  writeJsonAtomic(join(folder, 'vocab.json'), tokenizer.toJSON());
  writeJsonAtomic(join(folder, 'meta.json'), { ...meta, version, created: meta.created ?? new Date().toISOString() } satisfies VersionMeta);
  return version;
}

/** Reads the version id of a model folder without loading tfjs (hashes weights.bin). */
export function folderVersionId(folder: string): string {
  return weightsVersionId(readRequired(folder, 'weights.bin'));
}

/** Loads a model folder; needs `await loadTf()` first. Errors name the folder and the file at fault. */
export function loadModelFolder(folder: string): LoadedVersion {
  const weights = readRequired(folder, 'weights.bin');
  const configPath = join(folder, 'config.json');
  const cfg = parseJson(readRequired(folder, 'config.json'), configPath) as Partial<ConfigFile>;
  if (cfg.format !== 'whale-embedded-model' || cfg.formatVersion !== 1 || !cfg.modelConfig) {
    throw new Error(`${configPath}: not a whale-embedded-model v1 config (expected format, formatVersion 1, modelConfig)`);
  }
  const modelConfig = validateConfig(cfg.modelConfig, configPath);
  const expected = paramSpecs(modelConfig)
    .map((s) => `${s.name}:${s.shape.join('x')}`)
    .join(',');
  const listed = (cfg.tensors ?? []).map((s) => `${s.name}:${s.shape.join('x')}`).join(',');
  if (expected !== listed)
    throw new Error(`${configPath}: the tensor list does not match the architecture in modelConfig (written by another version of WHALE?)`);
  const vocabPath = join(folder, 'vocab.json');
  const tokenizer = WordTokenizer.fromJSON(parseJson(readRequired(folder, 'vocab.json'), vocabPath), vocabPath);
  if (tokenizer.size !== modelConfig.vocabSize) {
    throw new Error(`${vocabPath}: ${tokenizer.size} tokens but ${configPath} says vocabSize ${modelConfig.vocabSize}`);
  }
  const metaPath = join(folder, 'meta.json');
  const version = weightsVersionId(weights);
  const meta: VersionMeta = existsSync(metaPath)
    ? (parseJson(readFileSync(metaPath), metaPath) as VersionMeta)
    : { version, parent: null, created: statSync(join(folder, 'weights.bin')).mtime.toISOString() };
  if (meta.version !== undefined && meta.version !== version) {
    throw new Error(`${join(folder, 'weights.bin')}: its hash gives version ${version} but ${metaPath} says ${meta.version} (corrupt or replaced file)`);
  }
  const model = TransformerModel.fromBytes(modelConfig, weights, join(folder, 'weights.bin'));
  return { version, model, tokenizer, meta: { ...meta, version } };
}

export class VersionStore {
  readonly dir: string;

  constructor(dir: string) {
    this.dir = resolve(dir);
  }

  folder(version: string): string {
    if (!/^[0-9a-f]{16}$/.test(version)) throw new Error(`not a version id: ${JSON.stringify(version)} (16 hex digits expected)`);
    return join(this.dir, version);
  }

  has(version: string): boolean {
    return /^[0-9a-f]{16}$/.test(version) && existsSync(join(this.dir, version, 'weights.bin'));
  }

  list(): string[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .filter((n) => /^[0-9a-f]{16}$/.test(n) && existsSync(join(this.dir, n, 'weights.bin')))
      .sort();
  }

  /** Saves a version (a no-op when the same weights are already stored). Returns its id. */
  save(model: TransformerModel, tokenizer: WordTokenizer, meta: Omit<VersionMeta, 'version' | 'created'>): string {
    const version = weightsVersionId(model.toBytes());
    if (this.has(version)) return version;
    const tmp = join(this.dir, `.tmp-${version}-${randomBytes(4).toString('hex')}`);
    saveModelFolder(tmp, model, tokenizer, meta);
    this.publishFolder(tmp, version);
    return version;
  }

  /** Copies a model folder (e.g. the shipped base model) into the store. Returns its id. */
  importFolder(folder: string): string {
    const version = folderVersionId(folder);
    if (this.has(version)) return version;
    const tmp = join(this.dir, `.tmp-${version}-${randomBytes(4).toString('hex')}`);
    mkdirSync(tmp, { recursive: true });
    for (const f of MODEL_FILES) {
      if (f === 'meta.json' && !existsSync(join(folder, f))) continue;
      writeFileAtomic(join(tmp, f), readRequired(folder, f), { fsync: true });
    }
    this.publishFolder(tmp, version);
    return version;
  }

  load(version: string): LoadedVersion {
    const folder = this.folder(version);
    if (!existsSync(folder)) throw new Error(`policy version ${version} is not in ${this.dir}`);
    return loadModelFolder(folder);
  }

  readMeta(version: string): VersionMeta {
    const p = join(this.folder(version), 'meta.json');
    return parseJson(readRequired(this.folder(version), 'meta.json'), p) as VersionMeta;
  }

  private publishFolder(tmp: string, version: string): void {
    const dest = join(this.dir, version);
    try {
      renameSync(tmp, dest);
    } catch (e) {
      // Another writer got there first with the same content (same id = same weights).
      rmSync(tmp, { recursive: true, force: true });
      if (!this.has(version)) throw e;
    }
  }
}

function readRequired(folder: string, file: string): Buffer {
  const p = join(folder, file);
  if (!existsSync(p)) {
    const hint = /model[/\\]base\/?$/.test(folder) ? ' (the shipped base model is produced by `npm run pretrain`)' : '';
    throw new Error(`embedded model: missing ${p}${hint}`);
  }
  return readFileSync(p);
}

function parseJson(buf: Buffer, file: string): unknown {
  try {
    return JSON.parse(buf.toString('utf8'));
  } catch (e) {
    throw new Error(`${file}: invalid JSON: ${(e as Error).message}`);
  }
}
