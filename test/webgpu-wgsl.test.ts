/**
 * The WGSL generator, asserted on generated source: no GPU needed. Whether the
 * source compiles and computes what the IR means is checked on a device in
 * webgpu-device.test.ts and by the shared conformance specs.
 */
import { generateWgsl } from '@trident/backend-webgpu';
import { buffer, cos, defineKernel, f32, i32, KernelBuildError, min, select, sin, UnsupportedFeatureError, u32, uniform } from 'trident';
import { describe, expect, it } from 'vitest';

const withSubgroups = { subgroups: true };

describe('WGSL generation', () => {
  it('binds buffers in parameter order, uniforms and logical lengths in one struct', () => {
    const k = defineKernel({
      name: 'saxpy',
      workgroupSize: 64,
      params: { x: buffer('f32', 'read'), y: buffer('f32', 'read_write'), a: uniform('f32'), n: uniform('u32') },
      body: ({ x, y, a, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        k.if(i.lt(n), () => y.store(i, x.load(i).mul(a).add(y.load(i))));
      },
    });
    const w = generateWgsl(k, withSubgroups);
    expect(w.bufferParams).toEqual([
      { name: 'x', readOnly: true },
      { name: 'y', readOnly: false },
    ]);
    expect(w.uniformBinding).toBe(2);
    expect(w.uniforms.map((u) => `${u.kind}:${u.param}`)).toEqual(['uniform:a', 'uniform:n', 'length:x', 'length:y']);
    expect(w.source).toContain('@group(0) @binding(0) var<storage, read> b_x: array<f32>;');
    expect(w.source).toContain('@group(0) @binding(1) var<storage, read_write> b_y: array<f32>;');
    expect(w.source).toContain('@group(0) @binding(2) var<uniform> P: Params;');
    expect(w.source).toMatch(/struct Params \{\n {2}u_a: f32,\n {2}u_n: u32,\n {2}len_x: u32,\n {2}len_y: u32,\n\}/);
    // Bounds checks against the logical length, in helpers; variables named from the IR.
    expect(w.source).toContain('fn ld_x(i: u32, len: u32) -> f32 {\n  if (i < len) { return b_x[i]; }');
    expect(w.source).toContain('if (i < len) { b_y[i] = v; }');
    // Uniforms and lengths are read once into registers.
    expect(w.source).toContain('  let u_n = P.u_n;\n  let len_x = P.len_x;');
    expect(w.source).toMatch(/if \(\(i_\d+ < u_n\)\)/);
    expect(w.source).toMatch(/st_y\(i_\d+, .*, len_y\);/);
    expect(w.source).toMatch(/var i_\d+: u32;/);
    expect(w.source).not.toContain('enable subgroups');
  });

  it('linearises a 2-D or 3-D grid into globalIndex and numWorkgroups', () => {
    const k = defineKernel({
      name: 'ids',
      workgroupSize: 32,
      params: { out: buffer('u32', 'write') },
      body: ({ out }, k) => out.store(k.globalIndex, k.numWorkgroups.add(k.workgroupIndex).add(k.localIndex)),
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toContain('let wgi = wid.x + wid.y * nwg3.x + wid.z * nwg3.x * nwg3.y;');
    expect(src).toContain('let nwg = nwg3.x * nwg3.y * nwg3.z;');
    expect(src).toContain('let gid = wgi * 32u + lid;');
    expect(src).toContain('@compute @workgroup_size(32)');
  });

  it('declares a 2-D workgroup shape and maps the 3-D ids onto the WGSL built-ins', () => {
    const k = defineKernel({
      name: 'ids2',
      workgroupSize: [8, 4],
      params: { out: buffer('u32', 'write') },
      body: ({ out }, k) => out.store(k.globalId.y, k.localId.x.add(k.workgroupId.z).add(k.workgroupCount.x)),
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toContain('@compute @workgroup_size(8, 4, 1)');
    expect(src).toContain('@builtin(local_invocation_id) lid3: vec3<u32>');
    expect(src).toContain('((wid * vec3<u32>(8u, 4u, 1u) + lid3)).y');
    expect(src).toContain('(lid3).x');
    expect(src).toContain('nwg3');
  });

  it('makes the IR semantics explicit: shift masks, saturating NaN-safe conversions, bitcasts, bool -> 0/1', () => {
    const k = defineKernel({
      name: 'sem',
      workgroupSize: 8,
      params: { f: buffer('f32', 'read'), u: buffer('u32', 'read_write'), s: buffer('i32', 'write') },
      body: ({ f, u, s }, k) => {
        const i = k.globalIndex;
        const x = f.load(i);
        const a = u.load(i);
        u.store(
          i,
          a
            .shl(a)
            .add(a.shr(u32(40)))
            .add(x.cast('u32'))
            .add(x.gt(f32(0)).cast('u32')),
        );
        s.store(i, x.cast('i32').add(a.cast('i32')).add(a.bitcast('i32')).add(a.cast('f32').cast('i32')));
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toMatch(/<< \(tmp_\d+ & 31u\)/);
    expect(src).toContain('>> (40u & 31u)');
    expect(src).toContain('fn f2u_f32(x: f32) -> u32 {');
    expect(src).toContain('let nan = (bitcast<u32>(x) & u32(0x7fffffffu)) > u32(0x7f800000u);');
    expect(src).toContain('fn f2i_f32(x: f32) -> i32 {');
    expect(src).toMatch(/bitcast<i32>\(tmp_\d+\)/);
    expect(src).toMatch(/u32\(\(tmp_\d+ > 0f\)\)/);
    // int -> f32 rounds to nearest even by hand (WGSL lets the conversion pick either neighbour).
    expect(src).toContain('fn u2f_u32(x: u32) -> f32 {');
    expect(src).toContain('f32(m + select(u32(0u), u32(1u), up)), i32(shift)');
  });

  it('lowers sin and cos to accurate helpers, for scalars and vectors', () => {
    const k = defineKernel({
      name: 'trig',
      workgroupSize: 8,
      params: { x: buffer('f32', 'read', { vector: 4 }), y: buffer('f32', 'write', { vector: 4 }) },
      body: ({ x, y }, k) => y.store(k.globalIndex, sin(x.load(k.globalIndex)).add(cos(x.load(0)))),
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toContain('fn sin_v4f32(x: vec4<f32>) -> vec4<f32> {');
    expect(src).toContain('fn cos_v4f32(x: vec4<f32>) -> vec4<f32> {');
    expect(src).toContain('let n = round(x * vec4<f32>(0.63661977236758134f));');
    expect(src).toMatch(/sin_v4f32\(tmp_\d+\)/);
    expect(src).not.toMatch(/[^_]sin\(tmp/);
  });

  it('keeps operations on constants out of shader-creation evaluation', () => {
    const k = defineKernel({
      name: 'consts',
      workgroupSize: 1,
      params: { u: buffer('u32', 'write'), s: buffer('i32', 'write'), f: buffer('f32', 'write') },
      body: ({ u, s, f }) => {
        u.store(0, u32(0xffffffff).add(u32(1))); // wraps at run time, an error if folded
        u.store(1, u32(7).div(u32(0)));
        s.store(0, i32(-0x80000000).div(i32(-1)));
        f.store(0, f32(Number.NaN));
        f.store(1, f32(-0));
        f.store(2, f32(1).div(f32(0)));
        u.store(2, u.length.div(0));
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toContain('(rt_u32(4294967295u) + rt_u32(1u))');
    expect(src).toContain('(rt_i32(i32(-2147483648)) / rt_i32((-1i)))');
    expect(src).toContain('bitcast<f32>(rt_u32(0x7fc00000u))');
    expect(src).toContain('bitcast<f32>(0x80000000u)');
    expect(src).toContain('(rt_f32(1f) / rt_f32(0f))');
    expect(src).toContain('(len_u / rt_u32(0u))');
    expect(src).toContain('fn rt_u32(x: u32) -> u32 { return x; }');
  });

  it('lowers atomics onto atomic<T> arrays, branch-free where the spare element allows, with a strong compare-exchange', () => {
    const k = defineKernel({
      name: 'atomics',
      workgroupSize: 64,
      params: { h: buffer('i32', 'atomic'), c: buffer('u32', 'atomic') },
      body: ({ h, c }, k) => {
        h.atomicAdd(k.globalIndex, 1);
        h.atomicMin(0, -5);
        const old = c.atomicCompareExchange(0, 0, 1);
        c.store(1, old.add(c.load(2)));
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toContain('var<storage, read_write> b_h: array<atomic<i32>>;');
    // Out of range, read-modify-writes and stores go to the spare element past the logical
    // length (webgpu-buffer.ts) instead of branching; an RMW's old value is kept only in range.
    expect(src).toContain('return select(i32(), atomicAdd(&b_h[min(i, len)], v), i < len);');
    expect(src).toContain('return select(i32(), atomicMin(&b_h[min(i, len)], v), i < len);');
    expect(src).toContain('if (!(i < len)) { return u32(); }');
    expect(src).toContain('atomicCompareExchangeWeak(&b_c[i], expected, v)');
    expect(src).toContain('if (r.exchanged || r.old_value != expected) { return r.old_value; }');
    expect(src).toContain('fn atomic_store_c(i: u32, v: u32, len: u32) {\n  atomicStore(&b_c[min(i, len)], v);\n}');
    // Loads are branch-free: the index clamped into the array, the value kept only in range.
    expect(src).toContain('return select(u32(), atomicLoad(&b_c[min(i, arrayLength(&b_c) - 1u)]), i < len);');
    expect(src).toMatch(/tmp_\d+ = atomic_add_h\(gid, 1i, len_h\);/);
    expect(src).toContain('  atomic_store_c(1u, ');
  });

  it('declares atomic workgroup arrays as array<atomic<T>, N>, every access an atomic built-in kept in bounds', () => {
    const k = defineKernel({
      name: 'wg_atomics',
      workgroupSize: 64,
      // Indices from a uniform: nothing bounds them, so every access keeps its check.
      params: { out: buffer('u32', 'write'), at: uniform('u32') },
      body: ({ out, at }, k) => {
        const h = k.workgroupArray('u32', 256, { atomic: true });
        const s = k.workgroupArray('i32', 4, { atomic: true });
        h.atomicAdd(at, 1);
        s.store(at, -2);
        const old = s.atomicCompareExchange(0, 0, 5);
        k.barrier();
        out.store(k.globalIndex, h.load(at).add(old.bitcast('u32')));
      },
    });
    const w = generateWgsl(k, withSubgroups);
    expect(w.source).toContain('var<workgroup> wg_0: array<atomic<u32>, 256>;');
    expect(w.source).toContain('var<workgroup> wg_1: array<atomic<i32>, 4>;');
    expect(w.workgroupStorageBytes).toBe(4 * 260);
    // No spare element in workgroup memory: out of range, an RMW adds its identity to the clamped element.
    expect(w.source).toContain(
      'fn wgatomic_add_0(i: u32, v: u32) -> u32 {\n  return select(u32(), atomicAdd(&wg_0[min(i, 255u)], select(u32(0), v, i < 256u)), i < 256u);',
    );
    expect(w.source).toContain('if (i < 4u) { atomicStore(&wg_1[i], v); }');
    // Compare-exchange keeps its helper (the retry loop) even at a constant index in range.
    expect(w.source).toContain('atomicCompareExchangeWeak(&wg_1[i], expected, v)');
    expect(w.source).toContain('return select(u32(), atomicLoad(&wg_0[min(i, 255u)]), i < 256u);');
    expect(w.source).toMatch(/tmp_\d+ = wgatomic_add_0\(u_at, 1u\);/);
    expect(w.source).toContain('  wgatomic_store_1(u_at, (-2i));');
    expect(w.source).not.toMatch(/wg_\d\[i\] =|return wg_\d\[i\]/);
  });

  it('leaves out the workgroup bounds checks that an index provably passes, keeps the others', () => {
    const k = defineKernel({
      name: 'wg_bounds',
      workgroupSize: 64,
      params: { x: buffer('u32', 'read'), out: buffer('u32', 'write'), at: uniform('u32') },
      body: ({ x, out, at }, k) => {
        const a = k.workgroupArray('u32', 64);
        const b = k.workgroupArray('u32', 128);
        const h = k.workgroupArray('u32', 256, { atomic: true });
        const lid = k.localIndex;
        a.store(lid, x.load(k.globalIndex)); // lid <= 63: direct
        const twice = k.let(lid.mul(2), 'twice'); // <= 126, assigned once
        b.store(twice, 1); // direct
        const moved = k.var('u32', 0, 'moved');
        moved.set(lid); // assigned twice: unbounded
        b.store(moved, 2); // checked
        h.atomicAdd(x.load(lid).and(255), 1); // & 255 < 256: direct
        h.atomicAdd(x.load(lid).shr(24).add(1), 1); // <= 256: checked
        k.barrier();
        const v = k.let(a.load(lid.add(1)), 'v'); // lid + 1 <= 64: checked
        const w = k.let(b.load(min(at, 127)), 'w'); // min with 127: direct
        const c = k.let(h.load(at.rem(256)), 'c'); // % 256: direct
        out.store(k.globalIndex, v.add(w).add(c));
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toMatch(/\n {2}wg_0\[lid\] = tmp_\d+;/);
    expect(src).toMatch(/\n {2}wg_1\[twice_\d+\] = 1u;/);
    expect(src).toMatch(/wgst_1\(moved_\d+, 2u\);/);
    expect(src).toMatch(/atomicAdd\(&wg_2\[\(tmp_\d+ & 255u\)\], 1u\)/);
    expect(src).toMatch(/wgatomic_add_2\(\(\(tmp_\d+ >> \(24u & 31u\)\) \+ 1u\), 1u\)/);
    expect(src).toContain('wgld_0((lid + 1u))');
    expect(src).toContain('wg_1[min(u_at, 127u)]');
    expect(src).toContain('atomicLoad(&wg_2[(u_at % 256u)])');
  });

  it('views vec2/vec4 buffers as vector arrays and vec3 as packed scalars', () => {
    const k = defineKernel({
      name: 'vecs',
      workgroupSize: 16,
      params: { a: buffer('u32', 'read', { vector: 4 }), b: buffer('f32', 'read_write', { vector: 3 }) },
      body: ({ a, b }, k) => {
        const v = a.load(k.globalIndex);
        b.store(k.globalIndex, b.load(k.globalIndex).add(b.load(0)));
        void v;
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toContain('var<storage, read> b_a: array<vec4<u32>>;');
    expect(src).toContain('var<storage, read_write> b_b: array<f32>;');
    expect(src).toContain('return vec3<f32>(b_b[3u * i], b_b[3u * i + 1u], b_b[3u * i + 2u]);');
    const lengths = generateWgsl(k, withSubgroups).uniforms.filter((u) => u.kind === 'length');
    expect(lengths).toEqual([
      { kind: 'length', param: 'a', vector: 4 },
      { kind: 'length', param: 'b', vector: 3 },
    ]);
  });

  it('declares workgroup arrays, barriers and loops with a continuing block', () => {
    const k = defineKernel({
      name: 'blocksum',
      workgroupSize: 64,
      params: { x: buffer('u32', 'read'), out: buffer('u32', 'write') },
      body: ({ x, out }, k) => {
        const sh = k.workgroupArray('u32', 64);
        sh.store(k.localIndex, x.load(k.globalIndex));
        k.barrier();
        k.for({ from: 32, to: 64, step: 1, type: 'u32' }, (s) => {
          k.if(s.eq(40), () => k.continue());
          k.if(k.localIndex.lt(s), () => sh.store(k.localIndex, sh.load(k.localIndex).add(sh.load(s))));
        });
        k.barrier();
        k.if(k.localIndex.eq(0), () => out.store(k.workgroupIndex, sh.load(0)));
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toMatch(/var<workgroup> wg_\d+: array<u32, 64>;/);
    expect(src).toContain('workgroupBarrier();');
    expect(src).not.toContain('storageBarrier();'); // no buffer is both read and written
    expect(src).toMatch(/loop \{\n.*if \(!\(\(i_\d+ < end_\d+\)\)\) \{ break; \}/);
    expect(src).toMatch(/continuing \{\n\s+i_\d+ = \(i_\d+ \+ step_\d+\);\n\s+\}/);
    expect(src).toContain('continue;');
    expect(generateWgsl(k, withSubgroups).workgroupStorageBytes).toBe(256);
  });

  it('adds a storage barrier to barrier() where a buffer is written and read, never to workgroupBarrier()', () => {
    const k = defineKernel({
      name: 'barrier_kinds',
      workgroupSize: 64,
      params: { x: buffer('u32', 'read_write') },
      body: ({ x }, k) => {
        const sh = k.workgroupArray('u32', 64);
        sh.store(k.localIndex, x.load(k.globalIndex));
        k.barrier();
        x.store(k.globalIndex, sh.load(0));
        k.workgroupBarrier();
        sh.store(k.localIndex, 2);
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src.match(/storageBarrier\(\);/g)).toHaveLength(1);
    expect(src.match(/workgroupBarrier\(\);/g)).toHaveLength(2);
    // (Indices in range by construction: the workgroup accesses need no helpers.)
    expect(src).toMatch(/storageBarrier\(\);\n\s+workgroupBarrier\(\);\n\s+tmp_\d+ = wg_\d+\[0u\]/);
    expect(src).toMatch(/st_x\([^;]*;\n\s+workgroupBarrier\(\);\n\s+wg_\d+\[lid\] = 2u;/);
  });

  it('lowers return in a kernel with barriers to a done flag, so every invocation still reaches each barrier', () => {
    const k = defineKernel({
      name: 'early',
      workgroupSize: 64,
      params: { out: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ out, n }, k) => {
        const sh = k.workgroupArray('u32', 64);
        k.if(k.globalIndex.ge(n), () => k.return());
        sh.store(k.localIndex, 1);
        k.barrier();
        out.store(k.globalIndex, sh.load(0));
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src).toContain('var done = false;');
    expect(src).toContain('done = true;');
    expect(src).not.toMatch(/\breturn;/);
    expect(src).toMatch(/if \(!done\) \{\n\s+wg_\d+\[lid\] = 1u;\n\s+\}\n\s+workgroupBarrier\(\);\n\s+if \(!done\) \{/);
    // Without barriers a return is a return.
    const plain = defineKernel({
      name: 'plain',
      workgroupSize: 64,
      params: { out: buffer('u32', 'write'), n: uniform('u32') },
      body: ({ out, n }, k) => {
        k.if(k.globalIndex.ge(n), () => k.return());
        out.store(k.globalIndex, 1);
      },
    });
    expect(generateWgsl(plain, withSubgroups).source).toMatch(/\{\n\s+return;\n\s+\}/);
  });

  it('enables subgroups where the device has them and refuses subgroup kernels where it does not', () => {
    const k = defineKernel({
      name: 'sg',
      workgroupSize: 32,
      params: { out: buffer('u32', 'write') },
      body: ({ out }, k) => {
        const s = k.subgroupAdd(u32(1));
        const t = k.subgroupShuffle(k.subgroupInclusiveAdd(s), k.subgroupInvocation);
        out.store(k.globalIndex, select(k.subgroupSize.eq(4), t, k.subgroupBroadcastFirst(k.subgroupExclusiveAdd(t))));
      },
    });
    const src = generateWgsl(k, withSubgroups).source;
    expect(src.startsWith('// Trident kernel')).toBe(true);
    expect(src).toContain('enable subgroups;');
    expect(src).toContain('@builtin(subgroup_size) sg_size: u32');
    expect(src).toMatch(/subgroupAdd\(rt_u32\(1u\)\)|subgroupAdd\(1u\)/);
    expect(src).toContain('subgroupShuffle(');
    expect(src).toContain('subgroupExclusiveAdd(');
    expect(() => generateWgsl(k, { subgroups: false })).toThrow(UnsupportedFeatureError);
    try {
      generateWgsl(k, { subgroups: false });
    } catch (err) {
      expect((err as UnsupportedFeatureError).feature).toBe('subgroup');
      expect((err as UnsupportedFeatureError).kernel).toBe('sg');
    }
  });

  describe('buffers past one binding (segments)', () => {
    const k = defineKernel({
      name: 'segs',
      workgroupSize: 64,
      params: {
        a: buffer('u32', 'read', { vector: 4 }),
        c: buffer('u32', 'atomic'),
        b: buffer('f32', 'read_write', { vector: 3 }),
        f: buffer('f32', 'atomic'),
        n: uniform('u32'),
      },
      body: ({ a, c, b, f, n }, k) => {
        const i = k.let(k.globalIndex, 'i');
        const old = k.let(c.atomicAdd(i, a.load(i).x), 'old');
        c.atomicCompareExchange(n, old, 1);
        c.store(i.add(n), c.load(n));
        b.store(i, b.load(i).add(f.atomicAdd(i, f32(1))));
      },
    });

    it('leave the source as it is where no parameter is split', () => {
      const plain = generateWgsl(k, withSubgroups);
      expect(generateWgsl(k, { ...withSubgroups, segments: {} }).source).toBe(plain.source);
      // One segment is no split.
      expect(generateWgsl(k, { ...withSubgroups, segments: { a: { count: 1, size: 1020 } } }).source).toBe(plain.source);
      expect(plain.bufferParams.every((p) => p.segments === undefined)).toBe(true);
    });

    it('load from a segmented buffer in the form asked for: an if / else chain, or every segment read and selected', () => {
      const segments = { a: { count: 3, size: 1020 } };
      const branches = generateWgsl(k, { ...withSubgroups, segments, segmentLoads: 'branches' }).source;
      expect(branches).toContain(
        [
          'fn ld_a(i: u32, len: u32) -> vec4<u32> {',
          '  if (i < len) {',
          '    let s = i / 255u;',
          '    let j = i - s * 255u;',
          '    if (s == 0u) {',
          '      return b_a_0[j];',
          '    } else if (s == 1u) {',
          '      return b_a_1[j];',
          '    } else {',
          '      return b_a_2[j];',
          '    }',
          '  }',
          '  return vec4<u32>();',
          '}',
        ].join('\n'),
      );
      // Every index read is in range: past the length, element 0 (and the value returned is zero).
      const select = generateWgsl(k, { ...withSubgroups, segments, segmentLoads: 'select' }).source;
      expect(select).toContain(
        [
          'fn ld_a(i: u32, len: u32) -> vec4<u32> {',
          '  let ok = i < len;',
          '  let e = select(0u, i, ok);',
          '  let s = min(e / 255u, 2u);',
          '  let j = e - s * 255u;',
          '  var v = b_a_2[select(0u, j, s == 2u)];',
          '  v = select(v, b_a_0[select(0u, j, s == 0u)], s == 0u);',
          '  v = select(v, b_a_1[select(0u, j, s == 1u)], s == 1u);',
          '  return select(vec4<u32>(), v, ok);',
          '}',
        ].join('\n'),
      );
    });

    it('store to a segmented buffer by an if / else chain where asked', () => {
      const segments = { b: { count: 3, size: 1020 } };
      const branches = generateWgsl(k, { ...withSubgroups, segments, segmentStores: 'branches' }).source;
      const write = (k: number) => `b_b_${k}[3u * j] = v.x; b_b_${k}[3u * j + 1u] = v.y; b_b_${k}[3u * j + 2u] = v.z;`;
      expect(branches).toContain(
        [
          'fn st_b(i: u32, v: vec3<f32>, len: u32) {',
          '  if (i < len) {',
          '    let s = i / 340u;',
          '    let j = i - s * 340u;',
          '    if (s == 0u) {',
          `      ${write(0)}`,
          '    } else if (s == 1u) {',
          `      ${write(1)}`,
          '    } else {',
          `      ${write(2)}`,
          '    }',
          '  }',
          '}',
        ].join('\n'),
      );
      // Loads keep their own form (the default switch).
      expect(branches).toMatch(
        /fn ld_b\(i: u32, len: u32\) -> vec3<f32> \{\n {2}if \(i < len\) \{\n {4}let s = i \/ 340u;\n {4}let j = i - s \* 340u;\n {4}switch s \{/,
      );
    });

    it('bind one binding per segment, in parameter order, and pick the segment in each helper', () => {
      const w = generateWgsl(k, {
        ...withSubgroups,
        segments: { a: { count: 3, size: 1020 }, b: { count: 2, size: 1020 }, c: { count: 4, size: 1020 } },
      });
      expect(w.bufferParams).toEqual([
        { name: 'a', readOnly: true, segments: 3 },
        { name: 'c', readOnly: false, segments: 4 },
        { name: 'b', readOnly: false, segments: 2 },
        { name: 'f', readOnly: false },
      ]);
      expect(w.uniformBinding).toBe(10);
      expect(w.source).toContain('@group(0) @binding(2) var<storage, read> b_a_2: array<vec4<u32>>;');
      expect(w.source).toContain('@group(0) @binding(3) var<storage, read_write> b_c_0: array<atomic<u32>>;');
      expect(w.source).toContain('@group(0) @binding(8) var<storage, read_write> b_b_1: array<f32>;');
      expect(w.source).toContain('@group(0) @binding(9) var<storage, read_write> b_f: array<atomic<u32>>;');
      expect(w.source).toContain('@group(0) @binding(10) var<uniform> P: Params;');
      // Logical lengths are the whole buffer's, in view elements, as without segments.
      expect(w.uniforms.filter((u) => u.kind === 'length').map((u) => u.param)).toEqual(['a', 'c', 'b', 'f']);
      // Segment sizes in view elements: 1020 scalars are 255 vec4s and 340 vec3s; the last segment is the default arm.
      expect(w.source).toContain(
        [
          'fn ld_a(i: u32, len: u32) -> vec4<u32> {',
          '  if (i < len) {',
          '    let s = i / 255u;',
          '    let j = i - s * 255u;',
          '    switch s {',
          '      case 0u: { return b_a_0[j]; }',
          '      case 1u: { return b_a_1[j]; }',
          '      default: { return b_a_2[j]; }',
          '    }',
          '  }',
          '  return vec4<u32>();',
          '}',
        ].join('\n'),
      );
      expect(w.source).toContain('    let s = i / 340u;');
      expect(w.source).toContain('      default: { b_b_1[3u * j] = v.x; b_b_1[3u * j + 1u] = v.y; b_b_1[3u * j + 2u] = v.z; }');
      // Branch-free atomics stay branch-free in each arm: out of range, to the spare element at the
      // logical length (in the last segment, hence the clamp of the segment).
      expect(w.source).toContain(
        [
          'fn atomic_add_c(i: u32, v: u32, len: u32) -> u32 {',
          '  let e = min(i, len);',
          '  let s = min(e / 1020u, 3u);',
          '  let j = e - s * 1020u;',
          '  switch s {',
          '    case 0u: { return select(u32(), atomicAdd(&b_c_0[j], v), i < len); }',
        ].join('\n'),
      );
      expect(w.source).toContain('    default: { atomicStore(&b_c_3[j], v); }');
      expect(w.source).toContain('    case 2u: { return select(u32(), atomicLoad(&b_c_2[min(j, arrayLength(&b_c_2) - 1u)]), i < len); }');
      // Compare-exchange keeps its guard, then loops in the arm of its segment.
      const cas = w.source.slice(w.source.indexOf('fn atomic_compareExchange_c('));
      expect(cas).toContain('  if (!(i < len)) { return u32(); }\n  let s = i / 1020u;\n');
      expect(cas).toContain('    case 1u: {\n      loop {\n        let r = atomicCompareExchangeWeak(&b_c_1[j], expected, v);');
      // An unsplit parameter beside split ones is emitted as without segments.
      expect(w.source).toContain('atomicCompareExchangeWeak(&b_f[i], old, bitcast<u32>(bitcast<f32>(old) + v));');
    });

    it('refuse segment sizes that a vector view could straddle, and unknown parameters', () => {
      expect(() => generateWgsl(k, { ...withSubgroups, segments: { a: { count: 2, size: 1000 } } })).toThrow(KernelBuildError);
      expect(() => generateWgsl(k, { ...withSubgroups, segments: { n: { count: 2, size: 1020 } } })).toThrow(KernelBuildError);
      expect(() => generateWgsl(k, { ...withSubgroups, segments: { x: { count: 2, size: 1020 } } })).toThrow(KernelBuildError);
    });
  });
});
