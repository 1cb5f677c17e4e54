;; hash.wat: a loop-heavy function of the kind a tool runs, for measuring
;; what stopping on a deadline costs beside the tightest loop (loop.wat).
;; fnv(n) is the 32-bit FNV-1a hash of n bytes read round the module's
;; 64 KiB of memory: a load, an xor and a multiply a byte.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm hash.wat -o hash.wasm
(module
  (memory (export "memory") 1)
  (func (export "fnv") (param $n i32) (result i32)
    (local $i i32) (local $h i32)
    (local.set $h (i32.const 0x811c9dc5))
    (block $done
      (loop $more
        (br_if $done (i32.ge_u (local.get $i) (local.get $n)))
        (local.set $h (i32.mul
          (i32.xor (local.get $h) (i32.load8_u (i32.and (local.get $i) (i32.const 0xffff))))
          (i32.const 0x01000193)))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $more)))
    (local.get $h))
  (func (export "_start")))
