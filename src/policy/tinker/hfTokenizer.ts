/**
 * A Hugging Face `tokenizer.json` (+ the `tokenizer_config.json` beside it, which carries the chat
 * template and special tokens) as a ChatTokenizer: @lenml/tokenizers (transformers.js's tokenizers
 * without the rest) tokenises; the chat template is rendered by @huggingface/jinja, whose current
 * version parses templates (Qwen3's) that the copy bundled in @lenml/tokenizers cannot. Loaded
 * from local files only: nothing is downloaded.
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { ChatTokenizer } from './chatTokenizerType.js';

export async function loadHfChatTokenizer(file: string): Promise<ChatTokenizer> {
  const configFile = join(dirname(file), 'tokenizer_config.json');
  const tokenizerJSON = readJson(file, 'tokenizer.json');
  if (!existsSync(configFile)) throw new Error(`${configFile} is missing: the chat template and special tokens live there (put it beside ${file})`);
  const tokenizerConfig = readJson(configFile, 'tokenizer_config.json');
  if (typeof (tokenizerConfig as { chat_template?: unknown }).chat_template !== 'string')
    throw new Error(`${configFile}: no chat_template (a string) — the Tinker backend renders chats client-side and needs it`);
  const cfg = tokenizerConfig as { chat_template: string; bos_token?: unknown; eos_token?: unknown };
  const { TokenizerLoader } = await import('@lenml/tokenizers');
  const { Template } = await import('@huggingface/jinja');
  const tok = TokenizerLoader.fromPreTrained({ tokenizerJSON, tokenizerConfig } as never);
  const template = new Template(cfg.chat_template);
  const special = (t: unknown) => (typeof t === 'string' ? t : ((t as { content?: string } | undefined)?.content ?? ''));
  // The turn ends with the template's eos token (Qwen: <|im_end|>); <|endoftext|> ends a document.
  const single = [...new Set([special(cfg.eos_token), '<|endoftext|>', '<|eot_id|>', '<|end_of_text|>'])]
    .filter((t) => t !== '')
    .map((t) => ({ t, ids: tok.encode(t, { add_special_tokens: false }) }))
    .filter((x) => x.ids.length === 1);
  return {
    source: `tokenizer ${file}`,
    encodeChat: (messages, o) => {
      const text = template.render({
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        add_generation_prompt: o.addGenerationPrompt ?? false,
        bos_token: special(cfg.bos_token),
        eos_token: special(cfg.eos_token),
      });
      return tok.encode(text, { add_special_tokens: false });
    },
    decode: (ids) => tok.decode([...ids], { skip_special_tokens: true }),
    endOfTurn: single.length ? { ids: single.map((x) => x.ids[0]), texts: single.map((x) => x.t) } : undefined,
  };
}

function readJson(file: string, what: string): object {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new Error(`cannot read the ${what} ${file}: ${(e as Error).message}`);
  }
  try {
    return JSON.parse(text) as object;
  } catch (e) {
    throw new Error(`${file} is not valid JSON: ${(e as Error).message}`);
  }
}
