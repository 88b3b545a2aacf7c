/**
 * The protobuf bodies the official `tinker` SDK (>= 0.25) exchanges, for `whale serve`: it sends
 * `forward_backward` as a `tinker_public.ForwardBackwardRequest` and asks (`Accept:
 * application/x-protobuf`) for `ForwardBackwardOutput` and `SampleResponse` results as protobuf —
 * 0.38.0 refuses those two as JSON. Field numbers are those of `tinker/proto/tinker_public_pb2.py`
 * in the tinker 0.38.0 wheel; only what the embedded trainer and sampler use is read or written.
 *
 * A hand-written wire codec (varints, length-delimited fields, fixed64) rather than a protobuf
 * library: four messages, no code generation step, no new dependency. A decoded request is the
 * JSON body the SDK's older versions send, so one validation path (protocol.ts) serves both.
 *
 * WHALE's own client (client.ts) uses the mirror functions: it encodes its forward_backward request
 * and decodes the two results, for servers that refuse JSON there (SkyRL >= 0.4, hosted Tinker).
 */

/** Thrown for a body that is not the message it claims to be; the server answers 400 with it. */
export class ProtoError extends Error {}

const WIRE_VARINT = 0;
const WIRE_I64 = 1;
const WIRE_LEN = 2;
const WIRE_I32 = 5;

/** tinker_public.DType */
const DTYPE = { float32: 1, int64: 2, int32: 3, bfloat16: 4 } as const;

type Field = { no: number; wire: number; varint?: bigint; bytes?: Uint8Array; i64?: Uint8Array };

/** Every field of one message, in order (repeated fields appear once per element). */
function fields(buf: Uint8Array, what: string): Field[] {
  const out: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (pos >= buf.length) throw new ProtoError(`${what}: truncated varint`);
      const b = buf[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (!(b & 0x80)) return v;
      if (shift > 63n) throw new ProtoError(`${what}: varint longer than 10 bytes`);
    }
  };
  const take = (n: number): Uint8Array => {
    if (n < 0 || pos + n > buf.length) throw new ProtoError(`${what}: field runs past the end of the message`);
    const b = buf.subarray(pos, pos + n);
    pos += n;
    return b;
  };
  while (pos < buf.length) {
    const tag = Number(varint());
    const no = tag >>> 3;
    const wire = tag & 7;
    if (no === 0) throw new ProtoError(`${what}: field number 0`);
    if (wire === WIRE_VARINT) out.push({ no, wire, varint: varint() });
    else if (wire === WIRE_LEN) out.push({ no, wire, bytes: take(Number(varint())) });
    else if (wire === WIRE_I64) out.push({ no, wire, i64: take(8) });
    else if (wire === WIRE_I32) out.push({ no, wire, i64: take(4) });
    else throw new ProtoError(`${what}: unsupported wire type ${wire} (field ${no})`);
  }
  return out;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });
function str(f: Field, what: string): string {
  if (!f.bytes) throw new ProtoError(`${what}: expected a string`);
  try {
    return utf8.decode(f.bytes);
  } catch {
    throw new ProtoError(`${what}: not UTF-8`);
  }
}
function bytesOf(f: Field, what: string): Uint8Array {
  if (!f.bytes) throw new ProtoError(`${what}: expected bytes`);
  return f.bytes;
}
function num(f: Field, what: string): number {
  if (f.varint === undefined) throw new ProtoError(`${what}: expected a varint`);
  return Number(BigInt.asIntN(64, f.varint));
}
function dbl(f: Field, what: string): number {
  if (!f.i64 || f.i64.length !== 8) throw new ProtoError(`${what}: expected a double`);
  return new DataView(f.i64.buffer, f.i64.byteOffset, 8).getFloat64(0, true);
}

/** Little-endian packed numbers, as the SDK packs tokens (int32) and tensors (numpy tobytes()). */
function unpack(b: Uint8Array, dtype: number, what: string): number[] {
  const size = dtype === DTYPE.int64 ? 8 : dtype === DTYPE.bfloat16 ? 2 : 4;
  if (b.length % size !== 0) throw new ProtoError(`${what}: ${b.length} bytes is not a whole number of ${size}-byte values`);
  const v = new DataView(b.buffer, b.byteOffset, b.length);
  const out: number[] = [];
  for (let i = 0; i < b.length; i += size) {
    if (dtype === DTYPE.float32) out.push(v.getFloat32(i, true));
    else if (dtype === DTYPE.int32) out.push(v.getInt32(i, true));
    else if (dtype === DTYPE.int64) out.push(Number(v.getBigInt64(i, true)));
    else out.push(new Float32Array(Uint32Array.of(v.getUint16(i, true) << 16).buffer)[0]);
  }
  return out;
}

const DTYPE_NAME: Record<number, string> = { [DTYPE.float32]: 'float32', [DTYPE.int64]: 'int64', [DTYPE.int32]: 'int64', [DTYPE.bfloat16]: 'float32' };

function tensor(b: Uint8Array, what: string): { data: number[]; dtype: string; shape?: number[] } {
  let dtype = 0;
  let dense: Uint8Array | undefined;
  const shape: number[] = [];
  for (const f of fields(b, what)) {
    if (f.no === 1) dense = bytesOf(f, `${what}.dense`);
    else if (f.no === 2) throw new ProtoError(`${what}: sparse tensors are not supported by the embedded backend; send dense ones`);
    else if (f.no === 3) dtype = num(f, `${what}.dtype`);
    else if (f.no === 4) {
      // repeated int64: packed (proto3's default) or one varint per element
      if (f.bytes) shape.push(...packedVarints(f.bytes, `${what}.shape`));
      else shape.push(num(f, `${what}.shape`));
    }
  }
  if (!DTYPE_NAME[dtype]) throw new ProtoError(`${what}: unknown dtype ${dtype}`);
  return { data: unpack(dense ?? new Uint8Array(), dtype, what), dtype: DTYPE_NAME[dtype], ...(shape.length ? { shape } : {}) };
}

function packedVarints(b: Uint8Array, what: string): number[] {
  const out: number[] = [];
  let v = 0n;
  let shift = 0n;
  for (const byte of b) {
    v |= BigInt(byte & 0x7f) << shift;
    shift += 7n;
    if (!(byte & 0x80)) {
      out.push(Number(BigInt.asIntN(64, v)));
      v = 0n;
      shift = 0n;
    }
  }
  if (shift !== 0n) throw new ProtoError(`${what}: truncated packed varint`);
  return out;
}

/** A map<string, V> entry: key = field 1, value = field 2. */
function mapEntry(b: Uint8Array, what: string): { key: string; value?: Field } {
  let key = '';
  let value: Field | undefined;
  for (const f of fields(b, what)) {
    if (f.no === 1) key = str(f, `${what}.key`);
    else if (f.no === 2) value = f;
  }
  return { key, value };
}

function datum(b: Uint8Array, what: string): unknown {
  const chunks: { type: string; tokens: number[] }[] = [];
  const lossFnInputs: Record<string, unknown> = {};
  for (const f of fields(b, what)) {
    if (f.no === 1) {
      const where = `${what}.model_input[${chunks.length}]`;
      const arms = fields(bytesOf(f, where), where);
      const text = arms.find((a) => a.no === 1);
      if (!text) throw new ProtoError(`${where}: only encoded_text chunks are supported by the embedded backend (no image or audio input)`);
      const tok = fields(bytesOf(text, where), where).find((a) => a.no === 1);
      chunks.push({ type: 'encoded_text', tokens: tok ? unpack(bytesOf(tok, where), DTYPE.int32, `${where}.tokens`) : [] });
    } else if (f.no === 2) {
      const e = mapEntry(bytesOf(f, `${what}.loss_fn_inputs`), `${what}.loss_fn_inputs`);
      const where = `${what}.loss_fn_inputs.${e.key}`;
      lossFnInputs[e.key] = e.value ? tensor(bytesOf(e.value, where), where) : { data: [] };
    }
    // 3, 4: provenance spans — the embedded trainer has no use for them
  }
  return { model_input: { chunks }, loss_fn_inputs: lossFnInputs };
}

/**
 * A `tinker_public.ForwardBackwardRequest` → the JSON body older SDKs send:
 * `{model_id, seq_id, forward_only, forward_backward_input: {data, loss_fn, loss_fn_config}}`.
 */
export function decodeForwardBackwardRequest(b: Uint8Array): unknown {
  const what = 'ForwardBackwardRequest';
  let modelId = '';
  let seqId = 0;
  let lossFn = '';
  let forwardOnly = false;
  const data: unknown[] = [];
  const config: Record<string, number> = {};
  for (const f of fields(b, what)) {
    if (f.no === 1) modelId = str(f, `${what}.model_id`);
    else if (f.no === 2) seqId = num(f, `${what}.seq_id`);
    else if (f.no === 3) data.push(datum(bytesOf(f, `${what}.data`), `${what}.data[${data.length}]`));
    else if (f.no === 4) lossFn = str(f, `${what}.loss_fn`);
    else if (f.no === 5) {
      const e = mapEntry(bytesOf(f, `${what}.loss_fn_config`), `${what}.loss_fn_config`);
      if (e.value) config[e.key] = dbl(e.value, `${what}.loss_fn_config.${e.key}`);
    } else if (f.no === 6) forwardOnly = num(f, `${what}.forward_only`) !== 0;
    // 7: loss_fn_config_v2 mirrors 5 for numbers; string settings mean nothing to cross_entropy
  }
  return {
    model_id: modelId,
    seq_id: seqId,
    forward_only: forwardOnly,
    forward_backward_input: { data, loss_fn: lossFn, loss_fn_config: Object.keys(config).length ? config : null },
  };
}

class Writer {
  private readonly parts: Uint8Array[] = [];
  private varint(v: bigint | number): void {
    let x = BigInt.asUintN(64, BigInt(v));
    const out: number[] = [];
    while (x >= 0x80n) {
      out.push(Number(x & 0x7fn) | 0x80);
      x >>= 7n;
    }
    out.push(Number(x));
    this.parts.push(Uint8Array.from(out));
  }
  /** A bare varint, for packed repeated fields. */
  rawVarint(v: number): this {
    this.varint(v);
    return this;
  }
  uint(no: number, v: number): this {
    this.varint((no << 3) | WIRE_VARINT);
    this.varint(v);
    return this;
  }
  bytes(no: number, b: Uint8Array): this {
    this.varint((no << 3) | WIRE_LEN);
    this.varint(b.length);
    this.parts.push(b);
    return this;
  }
  string(no: number, s: string): this {
    return this.bytes(no, new TextEncoder().encode(s));
  }
  double(no: number, v: number): this {
    this.varint((no << 3) | WIRE_I64);
    const b = new Uint8Array(8);
    new DataView(b.buffer).setFloat64(0, v, true);
    this.parts.push(b);
    return this;
  }
  finish(): Uint8Array {
    return Buffer.concat(this.parts);
  }
}

const f32 = (xs: readonly number[]) => new Uint8Array(Float32Array.from(xs).buffer);
const i32 = (xs: readonly number[]) => new Uint8Array(Int32Array.from(xs).buffer);
const i64 = (xs: readonly number[]) => new Uint8Array(BigInt64Array.from(xs.map((x) => BigInt(x))).buffer);

/** The JSON `forward_backward` result → `tinker_public.ForwardBackwardOutput` (one ArrayRecord of per-datum logprobs). */
export function encodeForwardBackwardOutput(out: {
  loss_fn_output_type: string;
  loss_fn_outputs: { logprobs: { data: number[] } }[];
  metrics: Record<string, number>;
}): Uint8Array {
  const w = new Writer().string(1, out.loss_fn_output_type);
  const per = out.loss_fn_outputs.map((o) => o.logprobs.data);
  const offsets = [0];
  for (const d of per) offsets.push(offsets.at(-1)! + d.length * 4);
  const batched = new Writer().bytes(1, f32(per.flat())).bytes(2, i64(offsets)).uint(3, DTYPE.float32).finish();
  const record = new Writer()
    .string(1, out.loss_fn_output_type)
    .bytes(2, new Writer().string(1, 'logprobs').bytes(2, batched).finish())
    .uint(3, per.length)
    .finish();
  w.bytes(2, record);
  for (const [k, v] of Object.entries(out.metrics)) w.bytes(3, new Writer().string(1, k).double(2, v).finish());
  return w.finish();
}

/** The JSON `sample` result → `tinker_public.SampleResponse`. */
export function encodeSampleResponse(out: { sequences: { tokens: number[]; logprobs?: number[] | null; stop_reason: string }[] }): Uint8Array {
  const w = new Writer();
  for (const s of out.sequences) {
    const seq = new Writer().uint(1, s.stop_reason === 'length' ? 1 : 0).bytes(2, i32(s.tokens));
    if (s.logprobs) seq.bytes(3, f32(s.logprobs));
    w.bytes(1, seq.finish());
  }
  return w.finish();
}

/** A tensor the client sends: numbers with their dtype (`int64` or `float32`, as the SDK sends them). */
function encodeTensor(t: { data: readonly number[]; dtype?: string; shape?: readonly number[] }, what: string): Uint8Array {
  const dtype = t.dtype ?? (t.data.every(Number.isInteger) ? 'int64' : 'float32');
  if (dtype !== 'int64' && dtype !== 'float32') throw new ProtoError(`${what}: dtype ${dtype} has no protobuf encoding here (int64 or float32)`);
  const w = new Writer().bytes(1, dtype === 'int64' ? i64(t.data) : f32(t.data)).uint(3, dtype === 'int64' ? DTYPE.int64 : DTYPE.float32);
  const shape = t.shape ?? [t.data.length];
  const packed = new Writer();
  for (const n of shape) packed.rawVarint(n);
  return w.bytes(4, packed.finish()).finish();
}

/**
 * The JSON `forward_backward` body → `tinker_public.ForwardBackwardRequest`, as the SDK's
 * request_conv writes it (tokens as packed int32, tensors dense little-endian). The inverse of
 * decodeForwardBackwardRequest.
 */
export function encodeForwardBackwardRequest(body: {
  model_id: string;
  seq_id?: number;
  forward_only?: boolean;
  forward_backward_input: {
    data: readonly { model_input: { chunks: readonly { type?: string; tokens: readonly number[] }[] }; loss_fn_inputs: Record<string, unknown> }[];
    loss_fn: string;
    loss_fn_config?: Record<string, number> | null;
  };
}): Uint8Array {
  const what = 'ForwardBackwardRequest';
  const w = new Writer().string(1, body.model_id);
  if (body.seq_id) w.uint(2, body.seq_id);
  body.forward_backward_input.data.forEach((d, i) => {
    const datum = new Writer();
    for (const c of d.model_input.chunks) {
      if (c.type !== undefined && c.type !== 'encoded_text')
        throw new ProtoError(`${what}.data[${i}]: chunk type ${c.type} is not supported (encoded_text only)`);
      datum.bytes(1, new Writer().bytes(1, new Writer().bytes(1, i32(c.tokens)).finish()).finish());
    }
    for (const [k, v] of Object.entries(d.loss_fn_inputs)) {
      if (v === undefined) continue;
      const where = `${what}.data[${i}].loss_fn_inputs.${k}`;
      datum.bytes(
        2,
        new Writer()
          .string(1, k)
          .bytes(2, encodeTensor(v as { data: number[]; dtype?: string; shape?: number[] }, where))
          .finish(),
      );
    }
    w.bytes(3, datum.finish());
  });
  w.string(4, body.forward_backward_input.loss_fn);
  for (const [k, v] of Object.entries(body.forward_backward_input.loss_fn_config ?? {})) w.bytes(5, new Writer().string(1, k).double(2, v).finish());
  if (body.forward_only) w.uint(6, 1);
  return w.finish();
}

/** A `BatchedTensor` split back into its datums by byte offsets (the inverse of encodeForwardBackwardOutput's packing). */
function batchedTensor(b: Uint8Array, what: string): { dtype: string; data: number[] }[] {
  let data: Uint8Array = new Uint8Array();
  let offsets: number[] = [];
  let dtype = DTYPE.float32 as number;
  for (const f of fields(b, what)) {
    if (f.no === 1) data = bytesOf(f, `${what}.data`);
    else if (f.no === 2) offsets = unpack(bytesOf(f, `${what}.offsets`), DTYPE.int64, `${what}.offsets`);
    else if (f.no === 3) dtype = num(f, `${what}.dtype`);
  }
  if (!DTYPE_NAME[dtype]) throw new ProtoError(`${what}: unknown dtype ${dtype}`);
  const out: { dtype: string; data: number[] }[] = [];
  for (let i = 0; i + 1 < offsets.length; i++) {
    const [from, to] = [offsets[i], offsets[i + 1]];
    if (from < 0 || to < from || to > data.length) throw new ProtoError(`${what}: offsets ${from}..${to} lie outside its ${data.length} bytes`);
    out.push({ dtype: DTYPE_NAME[dtype], data: unpack(data.subarray(from, to), dtype, `${what}[${i}]`) });
  }
  return out;
}

/**
 * `tinker_public.ForwardBackwardOutput` → the JSON result: one `{field: {data, dtype}}` per datum
 * (fields of every ArrayRecord, records in order), and the metrics.
 */
export function decodeForwardBackwardOutput(b: Uint8Array): {
  loss_fn_output_type: string;
  loss_fn_outputs: Record<string, { data: number[]; dtype: string }>[];
  metrics: Record<string, number>;
} {
  const what = 'ForwardBackwardOutput';
  let type = '';
  const outputs: Record<string, { data: number[]; dtype: string }>[] = [];
  const metrics: Record<string, number> = {};
  for (const f of fields(b, what)) {
    if (f.no === 1) type = str(f, `${what}.loss_fn_output_type`);
    else if (f.no === 2) {
      const where = `${what}.loss_fn_outputs`;
      let n = 0;
      const perField: [string, { dtype: string; data: number[] }[]][] = [];
      for (const r of fields(bytesOf(f, where), where)) {
        if (r.no === 2) {
          const e = mapEntry(bytesOf(r, `${where}.fields`), `${where}.fields`);
          if (e.value) perField.push([e.key, batchedTensor(bytesOf(e.value, `${where}.${e.key}`), `${where}.${e.key}`)]);
        } else if (r.no === 3) n = num(r, `${where}.num_datums`);
      }
      const start = outputs.length;
      for (let i = 0; i < n; i++) outputs.push({});
      for (const [name, per] of perField) {
        if (per.length !== n) throw new ProtoError(`${where}.${name}: ${per.length} datums, but the record holds ${n}`);
        per.forEach((t, i) => (outputs[start + i][name] = t));
      }
    } else if (f.no === 3) {
      const e = mapEntry(bytesOf(f, `${what}.metrics`), `${what}.metrics`);
      metrics[e.key] = e.value ? dbl(e.value, `${what}.metrics.${e.key}`) : 0;
    }
  }
  return { loss_fn_output_type: type, loss_fn_outputs: outputs, metrics };
}

/** `tinker_public.SampleResponse` → the JSON result (stop reasons as the SDK names them; NaN prompt logprobs as null). */
export function decodeSampleResponse(b: Uint8Array): {
  sequences: { tokens: number[]; logprobs: number[]; stop_reason: 'stop' | 'length' }[];
  prompt_logprobs?: (number | null)[];
} {
  const what = 'SampleResponse';
  const sequences: { tokens: number[]; logprobs: number[]; stop_reason: 'stop' | 'length' }[] = [];
  let prompt: (number | null)[] | undefined;
  for (const f of fields(b, what)) {
    if (f.no === 1) {
      const where = `${what}.sequences[${sequences.length}]`;
      const seq = { tokens: [] as number[], logprobs: [] as number[], stop_reason: 'stop' as 'stop' | 'length' };
      for (const s of fields(bytesOf(f, where), where)) {
        if (s.no === 1) {
          const reason = num(s, `${where}.stop_reason`);
          if (reason !== 0 && reason !== 1) throw new ProtoError(`${where}.stop_reason: unknown value ${reason}`);
          seq.stop_reason = reason === 1 ? 'length' : 'stop';
        } else if (s.no === 2) seq.tokens = unpack(bytesOf(s, `${where}.tokens`), DTYPE.int32, `${where}.tokens`);
        else if (s.no === 3) seq.logprobs = unpack(bytesOf(s, `${where}.logprobs`), DTYPE.float32, `${where}.logprobs`);
      }
      sequences.push(seq);
    } else if (f.no === 2)
      prompt = unpack(bytesOf(f, `${what}.prompt_logprobs`), DTYPE.float32, `${what}.prompt_logprobs`).map((x) => (Number.isNaN(x) ? null : x));
  }
  return { sequences, ...(prompt ? { prompt_logprobs: prompt } : {}) };
}
