import { DeviceLostError } from '@trident/core';

/**
 * Waiting for the GPU without blocking the page: a fence (or a timer query)
 * polled with zero timeouts from the event loop, where the browser updates
 * their status. `check` throws DeviceLostError once the context is lost, so a
 * wait never outlives its device.
 */

/** Resolves once the GPU has executed every command issued so far, polling a fence. */
export async function waitFence(gl: WebGL2RenderingContext, check: () => void): Promise<void> {
  const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
  if (!sync) {
    check();
    throw new DeviceLostError('webgl2', 'fenceSync failed');
  }
  gl.flush();
  const since = performance.now();
  try {
    for (;;) {
      const status = gl.clientWaitSync(sync, 0, 0);
      if (status === gl.ALREADY_SIGNALED || status === gl.CONDITION_SATISFIED) return;
      if (status === gl.WAIT_FAILED) {
        check();
        throw new DeviceLostError('webgl2', 'clientWaitSync failed');
      }
      check();
      await tick(since);
    }
  } finally {
    gl.deleteSync(sync);
  }
}

/** Polls a query's result this many times after the fence behind it signalled before giving up on it. */
const QUERY_POLLS_AFTER_FENCE = 2000;

/**
 * Resolves true once `query`'s result is available, false where it never came.
 * The result is available once the GPU has run everything up to endQuery, so it
 * is the wait: waiting for a fence first added a round of polling (LEDGER.md,
 * webgl2.queryWait). A fence still bounds the wait: a result not available
 * QUERY_POLLS_AFTER_FENCE polls after it signalled voids the timing. Results only
 * become available after the page returns to its event loop.
 */
export async function waitQuery(gl: WebGL2RenderingContext, query: WebGLQuery, check: () => void): Promise<boolean> {
  check();
  const sync = gl.fenceSync(gl.SYNC_GPU_COMMANDS_COMPLETE, 0);
  if (!sync) throw new DeviceLostError('webgl2', 'fenceSync failed');
  gl.flush();
  const polled = performance.now();
  try {
    let after = 0;
    while (!gl.getQueryParameter(query, gl.QUERY_RESULT_AVAILABLE)) {
      check();
      const status = gl.clientWaitSync(sync, 0, 0);
      if (status === gl.WAIT_FAILED) throw new DeviceLostError('webgl2', 'clientWaitSync failed');
      if ((status === gl.ALREADY_SIGNALED || status === gl.CONDITION_SATISFIED) && ++after > QUERY_POLLS_AFTER_FENCE) return false;
      await tick(polled);
    }
    return true;
  } finally {
    gl.deleteSync(sync);
  }
}

/** How long a wait polls back to back before it sleeps a millisecond between polls. */
const EAGER_POLL_MS = 5;

/**
 * Yields to the event loop, where the browser updates fence and query status: a
 * message on a channel, then (once the wait, started at `since`, passed
 * EAGER_POLL_MS) a one-millisecond timer set from that message's task. Not
 * setTimeout(0) in a chain: HTML's timer rules clamp nested timeouts from the fifth
 * on. Why this shape and EAGER_POLL_MS: LEDGER.md, webgl2.eagerPoll. The sleeps keep long waits from holding a
 * core that a software GPU needs.
 */
function tick(since: number): Promise<void> {
  if (typeof MessageChannel === 'undefined') return new Promise((resolve) => setTimeout(resolve, 0));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      if (performance.now() - since < EAGER_POLL_MS) resolve();
      else setTimeout(resolve, 1);
    };
    channel.port2.postMessage(undefined);
  });
}
