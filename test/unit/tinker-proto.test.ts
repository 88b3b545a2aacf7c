// The protobuf forward_backward body as the official tinker SDK 0.38.0 writes it (the bytes below are
// its request_conv.forward_backward_request_to_proto(...).SerializeToString(), forward_only set),
// decoded by whale serve's codec into the JSON body older SDKs send. The full round trip — responses
// read by the SDK's own deserialisers — runs in tinker-sdk.test.ts where the SDK is installed.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ProtoError, decodeForwardBackwardRequest } from '../../src/policy/tinker/proto.js';
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
