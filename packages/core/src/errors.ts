/**
 * Typed errors. Every error says which backend (and kernel, feature, argument or
 * limit) it concerns, so a user can act on it without reading Trident's source.
 */
export type TridentErrorCode =
  | 'BACKEND_UNAVAILABLE'
  | 'UNSUPPORTED_FEATURE'
  | 'INVALID_ARGUMENT'
  | 'LIMIT_EXCEEDED'
  | 'DEVICE_LOST'
  | 'KERNEL_BUILD'
  | 'KERNEL_EXECUTION';

export class TridentError extends Error {
  // Names are spelt out, not taken from the constructor: a minifier renames classes
  // (a Vite build reported a KernelExecutionError as 'l').
  override name = 'TridentError';
  readonly code: TridentErrorCode;
  constructor(code: TridentErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

/** A backend could not give a working device (no adapter, no context, missing API). */
export class BackendUnavailableError extends TridentError {
  override name = 'BackendUnavailableError';
  readonly backend: string;
  readonly reason: string;
  constructor(backend: string, reason: string, options?: { cause?: unknown }) {
    super('BACKEND_UNAVAILABLE', `backend '${backend}' is unavailable: ${reason}`, options);
    this.backend = backend;
    this.reason = reason;
  }
}

/** No backend in a preference list gave a device; `reasons` says why for each. */
export class NoBackendAvailableError extends TridentError {
  override name = 'NoBackendAvailableError';
  readonly reasons: ReadonlyArray<{ backend: string; reason: string }>;
  constructor(reasons: ReadonlyArray<{ backend: string; reason: string }>) {
    const list = reasons.map((r) => `${r.backend}: ${r.reason}`).join('; ');
    super('BACKEND_UNAVAILABLE', `no backend gave a working device (${list || 'none requested'})`);
    this.reasons = reasons;
  }
}

/** A kernel needs a feature the backend cannot provide. Raised when compiling, never at run time. */
export class UnsupportedFeatureError extends TridentError {
  override name = 'UnsupportedFeatureError';
  readonly backend: string;
  readonly feature: string;
  readonly kernel: string | undefined;
  constructor(backend: string, feature: string, kernel?: string, detail?: string) {
    const where = kernel ? `kernel '${kernel}' needs` : 'needs';
    super(
      'UNSUPPORTED_FEATURE',
      `${where} feature '${feature}', which backend '${backend}' does not support${detail ? `: ${detail}` : ''}`,
    );
    this.backend = backend;
    this.feature = feature;
    this.kernel = kernel;
  }
}

/** An argument was wrong; nothing was enqueued or changed. */
export class InvalidArgumentError extends TridentError {
  override name = 'InvalidArgumentError';
  readonly argument: string;
  constructor(argument: string, problem: string) {
    super('INVALID_ARGUMENT', `invalid argument '${argument}': ${problem}`);
    this.argument = argument;
  }
}

/** A request exceeds a device limit (named as in `device.caps.limits`). */
export class LimitExceededError extends TridentError {
  override name = 'LimitExceededError';
  readonly backend: string;
  readonly limit: string;
  readonly requested: number;
  readonly allowed: number;
  /** `allowed` is NaN where the limit is not a number known in advance (memory the host could not give). */
  constructor(backend: string, limit: string, requested: number, allowed: number, what?: string) {
    const amount = Number.isNaN(allowed) ? `${requested} requested, not available` : `${requested} > ${allowed}`;
    super('LIMIT_EXCEEDED', `${what ?? 'request'} exceeds limit '${limit}' of backend '${backend}': ${amount}`);
    this.backend = backend;
    this.limit = limit;
    this.requested = requested;
    this.allowed = allowed;
  }
}

/** The device was lost (GPU reset, context loss, destroyed). Every later call fails with this. */
export class DeviceLostError extends TridentError {
  override name = 'DeviceLostError';
  readonly backend: string;
  constructor(backend: string, reason: string, options?: { cause?: unknown }) {
    super('DEVICE_LOST', `device of backend '${backend}' was lost: ${reason}`, options);
    this.backend = backend;
  }
}

/** The kernel IR is malformed (type mismatch, misuse of the builder). */
export class KernelBuildError extends TridentError {
  override name = 'KernelBuildError';
  readonly kernel: string;
  constructor(kernel: string, problem: string) {
    super('KERNEL_BUILD', `kernel '${kernel}': ${problem}`);
    this.kernel = kernel;
  }
}

/** A kernel failed while running (e.g. an exception inside a CPU worker). */
export class KernelExecutionError extends TridentError {
  override name = 'KernelExecutionError';
  readonly backend: string;
  readonly kernel: string;
  constructor(backend: string, kernel: string, detail: string, options?: { cause?: unknown }) {
    super('KERNEL_EXECUTION', `kernel '${kernel}' failed on backend '${backend}': ${detail}`, options);
    this.backend = backend;
    this.kernel = kernel;
  }
}
