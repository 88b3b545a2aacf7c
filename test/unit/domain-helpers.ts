/** Shared helpers of the domain tests: run a shipped harness in-process with a scripted policy. */
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type { ChatMessage, ModelCall } from '../../src/core/trajectory.js';
import type { Domain, RolloutRecord, Task } from '../../src/domains/types.js';
import type { HarnessContext, HarnessDefinition, KnobValue } from '../../src/harness/sdk.js';
import { HarnessManifest } from '../../src/core/manifest.js';
import { readJsonWithSchema } from '../../src/core/jsonFile.js';

export const REPO = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

export async function loadHarness(dir: string): Promise<{ def: HarnessDefinition; manifest: HarnessManifest }> {
  const manifest = readJsonWithSchema(path.join(dir, 'harness.json'), HarnessManifest);
  const mod = (await import(pathToFileURL(path.join(dir, manifest.entry!)).href)) as { default: HarnessDefinition };
  return { def: mod.default, manifest };
}

/** Runs a harness on a task with `act` as the model; returns the rollout record the domain judges. */
export async function runHarness(
  def: HarnessDefinition,
  domain: Domain,
  task: Task,
  knobs: Record<string, KnobValue>,
  prompts: Record<string, string>,
  act: (messages: ChatMessage[]) => string,
): Promise<RolloutRecord & { messages: ChatMessage[] }> {
  const modelCalls: ModelCall[] = [];
  const events: RolloutRecord['events'] = [];
  const maxTurns = domain.limits.maxTurns ?? 16;
  const ctx: HarnessContext = {
    knobs,
    prompts,
    tools: domain.tools.map((t) => ({ name: t.name, description: t.description, parameters: t.parameters })),
    limits: { maxTurns, maxTokens: 4096, maxTokensPerCall: domain.limits.maxTokensPerCall, wallMs: 10_000 },
    async chat(messages, opts) {
      if (modelCalls.length >= maxTurns) throw new Error('turn limit');
      const sent = messages.map((m) => ({ role: m.role, content: m.content }));
      const text = act(sent);
      modelCalls.push({
        index: modelCalls.length,
        policyVersion: 'test',
        messages: sent,
        params: { ...opts },
        completion: text,
        finishReason: 'stop',
        usage: { promptTokens: 0, completionTokens: 0 },
        latencyMs: 0,
      });
      return { text, finishReason: 'stop', usage: { promptTokens: 0, completionTokens: 0 } };
    },
    async tool(name, args) {
      const tool = domain.tools.find((t) => t.name === name);
      if (!tool) throw new Error(`no tool ${name}`);
      const observation = await tool.call(args, task);
      events.push({ t: 0, type: 'tool', name, args, observation });
      return observation;
    },
    log(message, data) {
      events.push({ t: 0, type: 'log', message, data });
    },
  };
  const res = await def.run({ id: task.public.id, question: task.public.question, meta: task.public.meta }, ctx);
  const last = modelCalls[modelCalls.length - 1];
  const messages: ChatMessage[] = last ? [...last.messages, { role: 'assistant', content: last.completion }] : [];
  return { finalAnswer: res.answer, modelCalls, events, messages };
}

/** Knob values of a manifest: settings, else defaults. */
export function knobValues(manifest: HarnessManifest): Record<string, KnobValue> {
  const out: Record<string, KnobValue> = {};
  for (const [k, spec] of Object.entries(manifest.knobs)) out[k] = manifest.settings[k] ?? spec.default;
  return out;
}
