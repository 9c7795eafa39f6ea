/**
 * Helpers the generated JavaScript calls (see js.ts). They are emitted verbatim
 * into every kernel's source, so a worker needs nothing but the source string.
 * Each implements one rule of the IR's semantics (ir/nodes.ts).
 */
export const JS_RUNTIME = `
const $I32_MIN = -2147483648;
function $udiv(a, b) { return b === 0 ? a : Math.trunc(a / b) >>> 0; }
function $urem(a, b) { return b === 0 ? 0 : a % b; }
function $idiv(a, b) { return b === 0 || (a === $I32_MIN && b === -1) ? a : Math.trunc(a / b) | 0; }
function $irem(a, b) { return b === 0 || (a === $I32_MIN && b === -1) ? 0 : (a % b) | 0; }
function $f2u(x) { return x !== x ? 0 : x <= 0 ? 0 : x >= 4294967295 ? 4294967295 : Math.trunc(x) >>> 0; }
function $f2i(x) { return x !== x ? 0 : x <= -2147483648 ? -2147483648 : x >= 2147483647 ? 2147483647 : Math.trunc(x) | 0; }
function $popcnt(x) { x = x - ((x >>> 1) & 0x55555555); x = (x & 0x33333333) + ((x >>> 2) & 0x33333333); return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24); }
const $bcF = new Float32Array(1), $bcU = new Uint32Array($bcF.buffer), $bcI = new Int32Array($bcF.buffer);
function $f2ubits(x) { $bcF[0] = x; return $bcU[0]; }
function $f2ibits(x) { $bcF[0] = x; return $bcI[0]; }
function $u2fbits(x) { $bcU[0] = x; return $bcF[0]; }
function $i2fbits(x) { $bcI[0] = x; return $bcF[0]; }
function $inb(b, i) { return i >= 0 && i < b.length; }
function $amin(b, i, v) { if (!$inb(b, i)) return 0; for (;;) { const o = Atomics.load(b, i); if (o <= v) return o; if (Atomics.compareExchange(b, i, o, v) === o) return o; } }
function $amax(b, i, v) { if (!$inb(b, i)) return 0; for (;;) { const o = Atomics.load(b, i); if (o >= v) return o; if (Atomics.compareExchange(b, i, o, v) === o) return o; } }
function $aop(f, b, i, v) { return $inb(b, i) ? f(b, i, v) : 0; }
function $acas(b, i, cmp, v) { return $inb(b, i) ? Atomics.compareExchange(b, i, cmp, v) : 0; }
function $faadd(b, i, v) { if (!$inb(b, i)) return 0; for (;;) { const o = Atomics.load(b, i); const s = $u2fbits(o); if (Atomics.compareExchange(b, i, o, $f2ubits(Math.fround(s + v))) === o) return s; } }
function $faload(b, i) { return $inb(b, i) ? $u2fbits(Atomics.load(b, i)) : 0; }
function $fastore(b, i, v) { if ($inb(b, i)) Atomics.store(b, i, $f2ubits(v)); return 0; }
`;
