import { parentPort, threadId } from 'node:worker_threads';

// A delivery thread for test/webhooks.thread.test.ts: reports its thread id as its lag (so the test tells one
// thread from the next), fails just after starting while FAKE_DELIVERY_THREAD_FAILS is set in the
// environment it was started with, and stops when asked.

parentPort.postMessage({
  type: 'state',
  lagSeconds: threadId,
  disabledEndpoints: 0,
  attempts: { delivered: 0, rejected: 0, failed: 0 },
});
parentPort.postMessage({ type: 'started' });
if (process.env.FAKE_DELIVERY_THREAD_FAILS)
  setImmediate(() => {
    throw new Error('the fake thread failed');
  });
parentPort.on('message', (message) => {
  if (message === 'stop') parentPort.postMessage({ type: 'stopped' });
});
