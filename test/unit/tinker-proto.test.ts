// The protobuf forward_backward body as the official tinker SDK 0.38.0 writes it (the bytes below are
// its request_conv.forward_backward_request_to_proto(...).SerializeToString(), forward_only set),
// decoded by whale serve's codec into the JSON body older SDKs send. The full round trip — responses
// read by the SDK's own deserialisers — runs in tinker-sdk.test.ts where the SDK is installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  ProtoError,
  decodeForwardBackwardOutput,
  decodeForwardBackwardRequest,
  decodeSampleResponse,
  encodeForwardBackwardRequest,
} from '../../src/policy/tinker/proto.js';
import { ForwardBackwardBody } from '../../src/policy/tinker/protocol.js';

// Datum(model_input=[1,3,13,16], target_tokens=[3,13,16,6], weights=[0,.5,.25,1]), loss_fn cross_entropy,
// loss_fn_config {clip: 0.2}, model_id model_ab12, seq_id 3, forward_only
const SDK_0_38_0 =
  'Cgptb2RlbF9hYjEyEAMadAoUChIKEAEAAAADAAAADQAAABAAAAASIgoHd2VpZ2h0cxIXChAAAAAAAAAAPwAAgD4AAIA/GAEiAQQSOAoNdGFyZ2V0X3Rva2VucxInCiADAAAAAAAAAA0AAAAAAAAAEAAAAAAAAAAGAAAAAAAAABgCIgEEIg1jcm9zc19lbnRyb3B5Kg8KBGNsaXARmpmZmZmZyT8wAToRCgRjbGlwEgkJmpmZmZmZyT8=';

test('a protobuf ForwardBackwardRequest from the official SDK decodes to the JSON body', () => {
  const body = decodeForwardBackwardRequest(Buffer.from(SDK_0_38_0, 'base64'));
  assert.deepEqual(body, {
    model_id: 'model_ab12',
    seq_id: 3,
    forward_only: true,
    forward_backward_input: {
      loss_fn: 'cross_entropy',
      loss_fn_config: { clip: 0.2 },
      data: [
        {
          model_input: { chunks: [{ type: 'encoded_text', tokens: [1, 3, 13, 16] }] },
          loss_fn_inputs: {
            target_tokens: { data: [3, 13, 16, 6], dtype: 'int64', shape: [4] },
            weights: { data: [0, 0.5, 0.25, 1], dtype: 'float32', shape: [4] },
          },
        },
      ],
    },
  });
  assert.ok(ForwardBackwardBody.safeParse(body).success, 'the decoded body passes the JSON route’s schema');
});

test('a truncated or foreign body is a ProtoError that says where', () => {
  const bytes = Buffer.from(SDK_0_38_0, 'base64');
  assert.throws(
    () => decodeForwardBackwardRequest(bytes.subarray(0, bytes.length - 5)),
    (e: unknown) => e instanceof ProtoError && /ForwardBackwardRequest/.test(e.message),
  );
  assert.throws(() => decodeForwardBackwardRequest(Buffer.from('{"model_id": "x"}')), ProtoError);
});

test('the client encodes forward_backward byte for byte as the SDK 0.38.0 does (less loss_fn_config_v2, which it does not send)', () => {
  const sdk = Buffer.from(SDK_0_38_0, 'base64');
  const body = decodeForwardBackwardRequest(sdk) as Parameters<typeof encodeForwardBackwardRequest>[0];
  const ours = Buffer.from(encodeForwardBackwardRequest(body));
  // field 7 (loss_fn_config_v2, tag 0x3a) is the SDK's last field: {clip: 0.2} again, as a oneof value
  const v2 = sdk.lastIndexOf(Buffer.from([0x3a, 0x11]));
  assert.equal(v2 + 2 + 0x11, sdk.length, 'loss_fn_config_v2 ends the SDK body');
  assert.equal(ours.toString('hex'), sdk.subarray(0, v2).toString('hex'));
  assert.deepEqual(decodeForwardBackwardRequest(ours), body, 'and whale serve decodes it back');
});

test('a tensor without a dtype or in a dtype protobuf cannot carry is encoded or refused, not garbled', () => {
  const datum = (inputs: Record<string, unknown>) => ({
    model_id: 'm',
    forward_backward_input: { loss_fn: 'cross_entropy', data: [{ model_input: { chunks: [{ tokens: [1, 2] }] }, loss_fn_inputs: inputs }] },
  });
  const back = decodeForwardBackwardRequest(encodeForwardBackwardRequest(datum({ target_tokens: { data: [2, 3] }, weights: { data: [0.5, 1] } }))) as {
    forward_backward_input: { data: { loss_fn_inputs: Record<string, unknown> }[] };
  };
  assert.deepEqual(back.forward_backward_input.data[0].loss_fn_inputs, {
    target_tokens: { data: [2, 3], dtype: 'int64', shape: [2] },
    weights: { data: [0.5, 1], dtype: 'float32', shape: [2] },
  });
  assert.throws(
    () => encodeForwardBackwardRequest(datum({ target_tokens: { data: [1], dtype: 'bfloat16' } })),
    (e: unknown) => e instanceof ProtoError && /loss_fn_inputs\.target_tokens: dtype bfloat16/.test(e.message),
  );
});

// Written by the official protobuf runtime (tinker 0.38.0's tinker_public_pb2, SerializeToString()), and read
// back by the SDK's response_conv as: two sequences (stop: [9693, 151645] lp [-0.25, -1.5]; length: [1, 2, 3]
// lp [-0.5, -0.125, -2]), prompt_logprobs [NaN, -3.5]; and an ArrayRecord of two datums' logprobs ([-0.5, -0.25],
// [-1, -2, -4]) with metrics {loss:sum: 1.5}.
const SAMPLE_RESPONSE = 'ChQSCN0lAABdUAIAGggAAIC+AADAvwoeCAESDAEAAAACAAAAAwAAABoMAAAAvwAAAL4AAADAEggAAMB/AABgwA==';
const FB_OUTPUT = 'CgtBcnJheVJlY29yZBJCEj4KCGxvZ3Byb2JzEjIKFAAAAL8AAIC+AACAvwAAAMAAAIDAEhgAAAAAAAAAAAgAAAAAAAAAFAAAAAAAAAAYARgCGhMKCGxvc3M6c3VtEQAAAAAAAPg/';

test('protobuf results written by the official runtime decode to the JSON results', () => {
  assert.deepEqual(decodeSampleResponse(Buffer.from(SAMPLE_RESPONSE, 'base64')), {
    sequences: [
      { tokens: [9693, 151645], logprobs: [-0.25, -1.5], stop_reason: 'stop' },
      { tokens: [1, 2, 3], logprobs: [-0.5, -0.125, -2], stop_reason: 'length' },
    ],
    prompt_logprobs: [null, -3.5],
  });
  assert.deepEqual(decodeForwardBackwardOutput(Buffer.from(FB_OUTPUT, 'base64')), {
    loss_fn_output_type: 'ArrayRecord',
    loss_fn_outputs: [{ logprobs: { data: [-0.5, -0.25], dtype: 'float32' } }, { logprobs: { data: [-1, -2, -4], dtype: 'float32' } }],
    metrics: { 'loss:sum': 1.5 },
  });
  const fb = Buffer.from(FB_OUTPUT, 'base64');
  assert.throws(
    () => decodeForwardBackwardOutput(fb.subarray(0, 30)),
    (e: unknown) => e instanceof ProtoError && /ForwardBackwardOutput/.test(e.message),
  );
});
