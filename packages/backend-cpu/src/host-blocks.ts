/**
 * Where a CPU buffer's bytes live, and how many bytes all of a device's buffers may
 * hold together.
 *
 * A buffer goes on the device's heap (heap.ts: one shared wasm32 WebAssembly.Memory,
 * which WebAssembly kernels address by offset) whenever the heap has room for it, as
 * every buffer did before host blocks existed. One that does not fit — larger than
 * the heap's maximum, or the heap too full — gets a _host block_: a SharedArrayBuffer
 * of its own, which workers receive once, as they receive the heap's memory. A wasm32
 * module cannot address a host block, so a kernel given one runs its generated
 * JavaScript (dispatch-choice.ts, `kernelPath`).
 *
 * The budget (`maxTotalBufferBytes`) counts every live buffer, on the heap or not,
 * plus the host blocks kept for reuse below; an allocation past it is refused before
 * anything is allocated.
 *
 * A destroyed buffer's host block is kept for a later buffer of about its size
 * (within a quarter more), zeroed then, rather than dropped: the memory of a
 * SharedArrayBuffer returns to the system only once every thread that saw it has
 * collected its last view (the workers hold views, and a worker waiting in
 * Atomics.wait collects nothing), so a block dropped and another allocated would hold
 * both until some later collection. Kept blocks are dropped when a new one would pass
 * the budget, and when the device is destroyed.
 */
import { HeapFull, type SharedHeap, zeroShared } from './heap.ts';

const ALIGN = 16;

let nextBlockId = 1;

/** A SharedArrayBuffer holding one buffer outside the heap. Workers know it by `id`. */
export class HostBlock {
  readonly id = nextBlockId++;
  readonly buffer: SharedArrayBuffer;

  constructor(bytes: number) {
    this.buffer = new SharedArrayBuffer(bytes);
  }

  get bytes(): number {
    return this.buffer.byteLength;
  }
}

/** Where one buffer lives: at `offset` in the heap, or at the start of `block`. */
export type Placement = { readonly offset: number; readonly block?: undefined } | { readonly offset: 0; readonly block: HostBlock };

/** Why an allocation was refused: past the budget, or the host would not give the memory. */
export class OutOfHostMemory extends Error {
  constructor(
    readonly bytes: number,
    /** Bytes the budget still allows (NaN: the host refused, with no number to give). */
    readonly allowed: number,
    readonly reason: 'budget' | 'host',
  ) {
    super(reason === 'budget' ? `${bytes} bytes would pass the device's budget (${allowed} left)` : `the host refused ${bytes} bytes`);
  }
}

/** The bytes a placement charges to the budget for `bytes` requested. */
function charge(bytes: number): number {
  return Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
}

export class DeviceMemory {
  readonly heap: SharedHeap;
  /** The most bytes all buffers (and kept host blocks) may hold together. */
  readonly budget: number;
  /** Bytes of live buffers (heap blocks as charged, host blocks whole). */
  private live = 0;
  /** Host blocks of destroyed buffers, kept for reuse (see the file comment). */
  private readonly kept: HostBlock[] = [];
  private keptBytes = 0;
  /** Told when a kept block is dropped, so that the workers drop it too. */
  private readonly dropped: (block: HostBlock) => void;

  constructor(heap: SharedHeap, budget: number, dropped: (block: HostBlock) => void = () => undefined) {
    this.heap = heap;
    this.budget = budget;
    this.dropped = dropped;
  }

  /** Bytes held now: live buffers and kept host blocks. */
  get heldBytes(): number {
    return this.live + this.keptBytes;
  }

  /** Host blocks kept for reuse (tests). */
  get keptBlocks(): number {
    return this.kept.length;
  }

  /** Places `bytes` on the heap if it has room, else in a host block; zeroed. Throws OutOfHostMemory. */
  place(bytes: number): Placement {
    const want = charge(bytes);
    if (this.live + want > this.budget) throw new OutOfHostMemory(bytes, Math.max(0, this.budget - this.live), 'budget');
    if (want <= this.heap.available()) {
      // Kept host blocks give way to a buffer on the heap as to any other.
      if (this.live + this.keptBytes + want > this.budget) this.dropKept(this.live + want);
      try {
        const offset = this.heap.alloc(bytes);
        this.live += want;
        return { offset };
      } catch (err) {
        if (!(err instanceof HeapFull)) throw err;
        // The host would not commit the heap's pages: it will not give a block of that size either.
        if (err.hostRefused) throw new OutOfHostMemory(bytes, Number.NaN, 'host');
      }
    }
    return { offset: 0, block: this.hostBlock(want) };
  }

  /** Returns a placement's bytes: to the heap, or its host block to the kept ones. */
  release(placement: Placement, bytes: number): void {
    if (placement.block === undefined) {
      this.heap.release(placement.offset, bytes);
      this.live -= charge(bytes);
      return;
    }
    this.live -= placement.block.bytes;
    this.kept.push(placement.block);
    this.keptBytes += placement.block.bytes;
  }

  /** Drops every kept host block (the device is destroyed). */
  dropAll(): void {
    this.dropKept(Number.POSITIVE_INFINITY);
  }

  /** A kept block of `bytes` to `bytes` + a quarter (zeroed), else a new one; the budget was checked by the caller. */
  private hostBlock(bytes: number): HostBlock {
    let best = -1;
    for (let i = 0; i < this.kept.length; i++) {
      const size = (this.kept[i] as HostBlock).bytes;
      if (size >= bytes && size <= bytes + bytes / 4 && (best < 0 || size < (this.kept[best] as HostBlock).bytes)) best = i;
    }
    if (best >= 0) {
      const block = this.kept.splice(best, 1)[0] as HostBlock;
      this.keptBytes -= block.bytes;
      this.live += block.bytes;
      zeroShared(block.buffer, 0, block.bytes);
      return block;
    }
    // A new block: the kept ones it would not fit beside go first.
    if (this.live + this.keptBytes + bytes > this.budget) this.dropKept(this.live + bytes);
    let block: HostBlock;
    try {
      block = new HostBlock(bytes);
    } catch (err) {
      // V8 throws RangeError ("Array buffer allocation failed") when the host has no memory to give.
      if (err instanceof RangeError) throw new OutOfHostMemory(bytes, Number.NaN, 'host');
      throw err;
    }
    this.live += bytes;
    return block;
  }

  /** Drops kept blocks, largest first, until `needed` bytes plus those kept fit the budget. */
  private dropKept(needed: number): void {
    this.kept.sort((a, b) => b.bytes - a.bytes);
    while (this.kept.length > 0 && needed + this.keptBytes > this.budget) {
      const block = this.kept.shift() as HostBlock;
      this.keptBytes -= block.bytes;
      this.dropped(block);
    }
  }
}
