;; recurse.wat: calls itself without end, each frame holding locals, until
;; the runtime's call stack runs out.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm recurse.wat -o recurse.wasm
(module
  (memory (export "memory") 1)
  (func $down (param $n i64) (result i64)
    (local $a i64) (local $b i64) (local $c i64) (local $d i64)
    (local.set $a (i64.add (local.get $n) (i64.const 1)))
    (local.set $b (i64.mul (local.get $a) (i64.const 3)))
    (local.set $c (call $down (local.get $a)))
    (local.set $d (i64.add (local.get $b) (local.get $c)))
    (local.get $d))
  (func (export "_start")
    (drop (call $down (i64.const 0)))))
