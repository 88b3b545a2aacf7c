/**
 * The worker protocol: JSON lines over the harness process's stdin (parent → child) and stdout
 * (child → parent). It is language-neutral — a Python or any other harness speaks exactly this —
 * and every message is validated with zod on both sides, because the child is untrusted code and
 * the parent must treat anything it writes as hostile input.
 *
 * Conversation of one rollout (one process serves exactly one rollout, see SANDBOX.md):
 *
 *   child  → {"type":"ready","protocol":1,"runtime":"node"}          after loading the candidate
 *   parent → {"type":"run", rolloutId, task, knobs, prompts, tools, limits, gateway}
 *   child  → {"type":"log", message, data?}                           any number of times
 *   child  → {"type":"result","answer":"..."|null}                    exactly once, then exit
 *         or {"type":"error", message, stack?}                         the harness threw
 *
 * A warm process (Node harnesses, see workerPool.ts) serves several rollouts in turn, each in a fresh
 * worker thread: after `result`/`error` its host thread sends {"type":"exit","code":…} with the
 * rollout's nonce, and only then does the parent write the next `run`.
 *
 * The parent may write `run` before `ready` arrives (stdin buffers it). Model and tool calls are
 * HTTP requests to the recording gateway named in `run.gateway` (over its unix socket when
 * `socketPath` is given — the only route out of a network namespace — else over loopback TCP at
 * `baseUrl`), except where the run says `lane: "pipe"` (a context host, whose candidate code never
 * holds a socket: it asks its host, which is the runtime's own code). There the host carries them
 * on this channel, with the rollout's nonce:
 *
 *   child  → {"type":"call","id":7,"route":"chat"|"tool","name"?:"search","body":"<JSON text>"}
 *   parent → {"type":"reply","id":7,"status":200,"body":"<JSON text>"}
 *
 * answered exactly as the gateway answers the same request (status and body), and bound to the
 * rollout the process is serving, so no token travels.
 */
// zod/mini, not the full zod: a one-rollout harness process and a warm process's host thread load
// this file, and full zod costs each ~35 ms of start-up (460 KB to parse) against ~1 ms for mini
// (measured here). A rollout's worker thread loads none of it (framing.ts).
import * as z from 'zod/mini';
import { MAX_ANSWER_CHARS, MAX_LOG_CHARS, PROTOCOL_VERSION, encodeLine } from './framing.js';

// The parts without schemas, for code that must not load zod (a rollout's worker thread): framing.ts.
export { LineSplitter, MAX_ANSWER_CHARS, MAX_LOG_CHARS, PROTOCOL_VERSION } from './framing.js';

const JsonValue = z.unknown();
/** A tool's name in a `call` frame (a URL path segment on the HTTP lane). */
const MAX_TOOL_NAME_CHARS = 200;
const int = () => z.number().check(z.int());
const maxString = (n: number) => z.string().check(z.maxLength(n));

export const PublicTaskMessage = z.object({
  id: z.string(),
  question: z.string(),
  meta: z.optional(z.record(z.string(), JsonValue)),
});

export const ToolInfoMessage = z.object({
  name: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), JsonValue),
});

export const GatewayInfo = z.object({
  /** OpenAI-compatible base URL of this rollout, e.g. http://127.0.0.1:41234/rollout/<rid>/v1 */
  baseUrl: z.string(),
  /** Tools live at `${toolsUrl}/<name>` (POST, body = the arguments object). */
  toolsUrl: z.string(),
  /** Bearer token of this rollout; every gateway request must carry it. */
  token: z.string(),
  /** When present, connect to this unix socket instead of the TCP host in the URLs (same HTTP paths). */
  socketPath: z.optional(z.string()),
});
export type GatewayInfo = z.infer<typeof GatewayInfo>;

export const RunMessage = z.object({
  type: z.literal('run'),
  rolloutId: z.string(),
  task: PublicTaskMessage,
  knobs: z.record(z.string(), z.union([z.string(), z.number(), z.boolean()])),
  prompts: z.record(z.string(), z.string()),
  tools: z.array(ToolInfoMessage),
  limits: z.object({
    maxTurns: int(),
    maxTokens: int(),
    maxTokensPerCall: z.optional(int()),
    wallMs: int(),
  }),
  gateway: GatewayInfo,
  /**
   * A secret of this rollout. Node harnesses: the bootstrap puts it in every frame it writes;
   * candidate code never sees it, so a line it writes to stdout cannot pass for the runtime's.
   * Command harnesses: once a frame echoes it, every later frame must carry it, so a child process
   * that inherited stdout (model-written code the harness runs, say) cannot forge a `result`.
   */
  nonce: z.optional(z.string().check(z.maxLength(64))),
  /** "pipe": model and tool calls travel on the process's own pipe (`call` / `reply`), not HTTP. */
  lane: z.optional(z.enum(['http', 'pipe'])),
  /**
   * A context host's candidate (it serves any): the script's id (a hash of its text) and, unless
   * this process was sent it among its last MAX_HOST_SCRIPTS, the text (framing.ts).
   */
  script: z.optional(z.object({ id: z.string().check(z.maxLength(128)), source: z.optional(z.string()) })),
});
export type RunMessage = z.infer<typeof RunMessage>;

/** Everything the parent may send. A union so later messages (e.g. cancel) stay compatible. */
export const ParentMessage = z.discriminatedUnion('type', [RunMessage]);
export type ParentMessage = z.infer<typeof ParentMessage>;

export const ReadyMessage = z.object({
  type: z.literal('ready'),
  protocol: z.literal(PROTOCOL_VERSION),
  runtime: z.optional(maxString(100)),
  nonce: z.optional(maxString(64)),
});
export const LogMessage = z.object({
  type: z.literal('log'),
  message: maxString(MAX_LOG_CHARS),
  data: z.optional(JsonValue),
  level: z.optional(z.enum(['debug', 'info', 'warn', 'error'])),
  nonce: z.optional(maxString(64)),
});
export const ResultMessage = z.object({
  type: z.literal('result'),
  answer: z.nullable(maxString(MAX_ANSWER_CHARS)),
  nonce: z.optional(maxString(64)),
});
export const ErrorMessage = z.object({
  type: z.literal('error'),
  message: maxString(MAX_LOG_CHARS),
  stack: z.optional(maxString(MAX_LOG_CHARS)),
  nonce: z.optional(maxString(64)),
});

/**
 * Sent by a warm process's host thread (never by harness code: it carries the rollout's nonce) once
 * the rollout's worker thread has exited and the process is clean again: the next `run` may follow.
 */
export const ExitMessage = z.object({
  type: z.literal('exit'),
  code: int(),
  nonce: z.optional(maxString(64)),
});

/** A model or tool call on the pipe lane (see the top): what the gateway would get as a POST body. */
export const CallMessage = z.object({
  type: z.literal('call'),
  id: int(),
  route: z.enum(['chat', 'tool']),
  name: z.optional(maxString(MAX_TOOL_NAME_CHARS)),
  body: z.string(),
  nonce: z.optional(maxString(64)),
});
export type CallMessage = z.infer<typeof CallMessage>;

export const ChildMessage = z.discriminatedUnion('type', [ReadyMessage, LogMessage, ResultMessage, ErrorMessage, ExitMessage, CallMessage]);
export type ChildMessage = z.infer<typeof ChildMessage>;

export function encodeMessage(m: ParentMessage | ChildMessage): string {
  return encodeLine(m);
}

export type ParseOutcome<T> = { ok: true; message: T } | { ok: false; error: string };

/** Parses one protocol line; never throws (the line comes from untrusted code). */
export function parseLine<T>(schema: z.ZodMiniType<T>, line: string): ParseOutcome<T> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return { ok: false, error: `not JSON: ${preview(line)}` };
  }
  const r = schema.safeParse(value);
  if (!r.success) {
    const issue = r.error.issues[0];
    const where = issue.path.length ? issue.path.map(String).join('.') + ': ' : '';
    return { ok: false, error: `invalid message (${where}${issue.message}): ${preview(line)}` };
  }
  return { ok: true, message: r.data };
}

function preview(s: string): string {
  const t = s.length > 120 ? s.slice(0, 120) + '…' : s;
  return JSON.stringify(t);
}
