/**
 * Edits of whale.config.json that keep the user's comments and formatting (jsonc-parser computes a
 * minimal text edit), for commands that write one section, e.g. `whale backend connect`.
 */
import { applyEdits, modify, parse, printParseErrorCode, type ParseError } from 'jsonc-parser';
import { InputError } from './errors.js';

/** `text` with `section` set to `value`; the rest of the file byte for byte as it was. */
export function setConfigSection(text: string, file: string, section: string, value: unknown): string {
  const errors: ParseError[] = [];
  const root = parse(text, errors, { allowTrailingComma: true });
  if (errors.length) {
    const e = errors[0];
    const line = text.slice(0, e.offset).split('\n').length;
    throw new InputError({ file, line }, `not valid JSON (${printParseErrorCode(e.error)}); fix it before writing the ${section} section`);
  }
  if (root === null || typeof root !== 'object' || Array.isArray(root)) throw new InputError({ file }, 'the config must be a JSON object');
  const indent = /\n([ \t]+)"/.exec(text)?.[1] ?? '  ';
  const edits = modify(text, [section], value, {
    formattingOptions: { insertSpaces: !indent.includes('\t'), tabSize: indent.includes('\t') ? 1 : indent.length, eol: text.includes('\r\n') ? '\r\n' : '\n' },
  });
  return applyEdits(text, edits);
}
