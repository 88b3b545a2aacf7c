/**
 * SkyRL writes a sampler checkpoint as `<checkpoints_base>/<model>/sampler_weights/<name>.tar.gz`
 * (adapter_config.json + adapter_model.safetensors); vLLM's /v1/load_lora_adapter loads a folder.
 * So a `.tar.gz` lora_path is unpacked, once, into the folder beside it (`…/<name>/`), which is
 * what the sampler is handed — the trainer's checkpoint folder must be shared with the sampler's
 * machine (as `adapterDir` already requires), and reachable from here to unpack.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';

export function unpackedAdapterPath(path: string): string {
  if (!path.endsWith('.tar.gz')) return path;
  const dir = path.slice(0, -'.tar.gz'.length);
  if (existsSync(`${dir}/adapter_config.json`)) return dir;
  if (!existsSync(path))
    throw new Error(
      `${path} is a SkyRL sampler checkpoint (.tar.gz), which vLLM cannot load; WHALE unpacks it into ${dir}/ but cannot see it from here (publish.adapterDir must be a folder this machine shares with the trainer)`,
    );
  const tmp = `${dir}.unpack-${process.pid}`;
  rmSync(tmp, { recursive: true, force: true });
  mkdirSync(tmp, { recursive: true });
  const r = spawnSync('tar', ['-xzf', path, '-C', tmp], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`unpacking ${path} failed: ${r.stderr || r.error?.message}`);
  if (!existsSync(`${tmp}/adapter_config.json`)) throw new Error(`${path} holds no adapter_config.json: not a LoRA sampler checkpoint`);
  rmSync(dir, { recursive: true, force: true });
  renameSync(tmp, dir);
  return dir;
}
