/**
 * @trident/core: the device interface, the kernel IR and its builder, the
 * capability model, typed errors and the backend registry. The code generators
 * live in the backend packages (WGSL in backend-webgpu, GLSL in backend-webgl,
 * JavaScript and WebAssembly in backend-cpu).
 */
export type { BackendAdapter, BackendBuffer, BackendDevice, BackendOptionsMap, CompiledKernel, Grid } from './backend.ts';
export {
  BACKEND_KINDS,
  type BackendKind,
  type DeviceCaps,
  type DeviceInfo,
  type DeviceLimits,
  type Feature,
  type TimerSource,
} from './caps.ts';
export {
  Buffer,
  checkScalar,
  Device,
  type DispatchGrid,
  isTridentError,
  type ReadRange,
  type SkippedBackend,
  type Timing,
  toHostArray,
} from './device.ts';
export {
  BUFFER_DTYPES,
  type BufferDType,
  dtypeOfArray,
  type HostArray,
  isBufferDType,
  type ScalarType,
  type TypedArrayFor,
  typedArrayConstructor,
} from './dtype.ts';
export {
  BackendUnavailableError,
  DeviceLostError,
  InvalidArgumentError,
  KernelBuildError,
  KernelExecutionError,
  LimitExceededError,
  NoBackendAvailableError,
  TridentError,
  type TridentErrorCode,
  UnsupportedFeatureError,
} from './errors.ts';
export {
  analyzeKernel,
  childBlocks,
  childExprs,
  containsBarrier,
  forEachExprOfStmt,
  KERNEL_CLASSES,
  type KernelClass,
  type KernelInfo,
  walkExpr,
  walkStmts,
} from './ir/analyze.ts';
export {
  type AtomicWorkgroupArray,
  type BufferHandle,
  type BufferParam,
  buffer,
  type DispatchArgs,
  defineKernel,
  type Kernel,
  type KernelBuilder,
  type KernelSpec,
  type ParamHandles,
  type PrivateArray,
  type UniformParam,
  uniform,
  type WorkgroupArray,
} from './ir/builder.ts';
export { assignedVars, type InBoundsPlan, IndexBounds, inBoundsPlan, inductionOf } from './ir/index-ranges.ts';
export type * from './ir/nodes.ts';
export { privateArrayLength, workgroupShapeOf } from './ir/nodes.ts';
export { type ElementOf, isFloat, isInteger, typeInfo, type ValueType, type VecType, type VecWidth, vecType } from './ir/types.ts';
export {
  abs,
  bool,
  ceil,
  clamp,
  cos,
  countOneBits,
  exp,
  exp2,
  f32,
  floor,
  fma,
  i32,
  inverseSqrt,
  log,
  log2,
  max,
  min,
  type Operand,
  pow,
  select,
  sin,
  sqrt,
  trunc,
  u32,
  Val,
  Var,
  vec,
} from './ir/values.ts';
export { type CreateDeviceOptions, createDevice, DEFAULT_ORDER, probeBackends, registerBackend, registeredBackends } from './registry.ts';
