/**
 * The CPU device's heap: one shared `WebAssembly.Memory` holding the device's buffers
 * while it has room (host-blocks.ts places the rest), so that kernels compiled to
 * WebAssembly (codegen/wasm-generator.ts) address buffers by byte offset and JavaScript
 * kernels keep typed-array views of the same bytes. Workers receive the Memory once and
 * (offset, length) per buffer.
 *
 * A wasm32 memory holds at most 2^16 pages of 64 KiB (4 GiB); a shared memory reserves
 * its maximum up front, so the maximum is the largest of a few sizes that the runtime
 * agrees to reserve.
 *
 * Allocation: first fit in a free list sorted by offset, coalescing neighbours on
 * release; the top of the heap grows the memory by whole pages. Blocks are
 * 16-byte aligned (v128 loads), and reused bytes are zeroed on allocation (a new
 * buffer reads 0, as a fresh SharedArrayBuffer did).
 */

const PAGE = 65536;
const ALIGN = 16;
/** Maximum sizes tried, largest first (pages): 4 GiB, 2 GiB, 1 GiB, 256 MiB. */
const MAXIMUM_PAGES = [65536, 32768, 16384, 4096];

interface Block {
  offset: number;
  size: number;
}

/** An allocation failed: the heap's maximum has no room for `bytes`, or the host would not commit the pages. */
export class HeapFull extends Error {
  constructor(
    readonly bytes: number,
    /** Bytes the heap could still give (free blocks and never-used space up to its maximum). */
    readonly available: number,
    /** The maximum had room, but growing the memory failed (the host is out of memory). */
    readonly hostRefused: boolean,
  ) {
    super(`no room for ${bytes} bytes in the CPU device's memory (${available} bytes free of its maximum)`);
  }
}

export class SharedHeap {
  readonly memory: WebAssembly.Memory;
  /** The most bytes the memory may ever hold. */
  readonly maxBytes: number;
  /** Free blocks below `top`, sorted by offset, never adjacent to each other. */
  private readonly free: Block[] = [];
  /** Bytes in use or free-listed: everything at or past `top` is unallocated. */
  private top = 0;
  /** Bytes ever handed out: past this the memory is still as grown (zero). */
  private highWater = 0;

  /**
   * `maxBytesWanted`: the most the memory should ever hold (rounded down to whole
   * pages, at least one); the runtime may reserve less, down to the smallest of
   * MAXIMUM_PAGES. Tests lower it to send small buffers past the heap (host-blocks.ts).
   */
  constructor(maxBytesWanted = 2 ** 32) {
    let memory: WebAssembly.Memory | undefined;
    let maximum = 0;
    let lastError: unknown;
    const wanted = Math.max(1, Math.min(MAXIMUM_PAGES[0] as number, Math.floor(maxBytesWanted / PAGE)));
    const tries = [wanted, ...MAXIMUM_PAGES.filter((pages) => pages < wanted)];
    for (const pages of tries) {
      try {
        memory = new WebAssembly.Memory({ initial: 1, maximum: pages, shared: true });
        maximum = pages;
        break;
      } catch (err) {
        lastError = err;
      }
    }
    if (!memory) throw lastError instanceof Error ? lastError : new Error('cannot reserve a shared WebAssembly.Memory');
    this.memory = memory;
    this.maxBytes = maximum * PAGE;
  }

  /** Bytes the memory holds now. */
  get byteLength(): number {
    return this.memory.buffer.byteLength;
  }

  /** Bytes still available for blocks (free-listed plus never allocated up to the maximum). */
  available(): number {
    return this.free.reduce((sum, b) => sum + b.size, 0) + (this.maxBytes - this.top);
  }

  /** Reserves `bytes` (rounded up to 16, at least 16) and returns its offset; zeroed. Throws HeapFull. */
  alloc(bytes: number): number {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    for (let i = 0; i < this.free.length; i++) {
      const block = this.free[i] as Block;
      if (block.size < size) continue;
      const offset = block.offset;
      if (block.size === size) this.free.splice(i, 1);
      else {
        block.offset += size;
        block.size -= size;
      }
      this.zero(offset, size);
      return offset;
    }
    const offset = this.top;
    const end = offset + size;
    if (end > this.maxBytes) throw new HeapFull(size, this.available(), false);
    const have = this.memory.buffer.byteLength;
    if (end > have) {
      const needed = Math.ceil((end - have) / PAGE);
      // A quarter more than needed, within the maximum: fewer grows as buffers arrive one by one.
      const generous = Math.min(Math.max(needed, Math.ceil(have / PAGE / 4)), this.maxBytes / PAGE - have / PAGE);
      try {
        this.memory.grow(generous);
      } catch {
        try {
          this.memory.grow(needed);
        } catch {
          // The host could not commit the pages (RangeError): the same answer as a full heap.
          throw new HeapFull(size, this.available(), true);
        }
      }
    }
    this.top = end;
    this.zero(offset, size);
    return offset;
  }

  /** Returns a block from `alloc(bytes)` to the heap. */
  release(offset: number, bytes: number): void {
    const size = Math.max(ALIGN, Math.ceil(bytes / ALIGN) * ALIGN);
    let lo = 0;
    let hi = this.free.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if ((this.free[mid] as Block).offset < offset) lo = mid + 1;
      else hi = mid;
    }
    const before = this.free[lo - 1];
    const after = this.free[lo];
    let block: Block;
    if (before && before.offset + before.size === offset) {
      before.size += size;
      block = before;
      lo--;
    } else {
      block = { offset, size };
      this.free.splice(lo, 0, block);
    }
    if (after && block.offset + block.size === after.offset) {
      block.size += after.size;
      this.free.splice(lo + 1, 1);
    }
    // A free block at the top returns to the unallocated space.
    if (block.offset + block.size === this.top) {
      this.top = block.offset;
      this.free.splice(lo, 1);
    }
  }

  private zero(offset: number, size: number): void {
    const end = offset + size;
    if (offset < this.highWater) zeroShared(this.memory.buffer, offset, Math.min(end, this.highWater) - offset);
    this.highWater = Math.max(this.highWater, end);
  }
}

/**
 * Zeroes `bytes` bytes of shared memory from `offset`, eight bytes a store where both are
 * aligned: V8 fills a view of a SharedArrayBuffer one element at a time, so the widest
 * element is the fastest fill, and every buffer taken from reused heap memory is zeroed
 * (LEDGER.md cpu.zeroing).
 */
export function zeroShared(buffer: ArrayBufferLike, offset: number, bytes: number): void {
  if (offset % 8 === 0 && bytes % 8 === 0) new BigUint64Array(buffer, offset, bytes / 8).fill(0n);
  else new Uint8Array(buffer, offset, bytes).fill(0);
}
