// What the engine bundle gets for `import('@tensorflow/tfjs')` (scripts/build.mjs): tfjs-core with
// its gradients and chained ops, all the embedded model uses — without layers, converter, data and
// the cpu and webgl backends that the umbrella package loads (about 380 ms → 110 ms to import here).
// The sources and tests, which Node runs unbundled, import the umbrella package itself: Node cannot
// load tfjs-core's ES build (extensionless imports), which these three lines need.
export * from '@tensorflow/tfjs-core';
import '@tensorflow/tfjs-core/dist/register_all_gradients';
import '@tensorflow/tfjs-core/dist/public/chained_ops/register_all_chained_ops';
