;; fanout.wat: recursion without a loop: fib(60) by its definition makes
;; some 10^12 calls, none of them deeper than 60 frames, so no stack
;; overflow ends it; only a stop at function entry does.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm fanout.wat -o fanout.wasm
(module
  (memory (export "memory") 1)
  (func $fib (param $n i64) (result i64)
    (if (result i64) (i64.lt_u (local.get $n) (i64.const 2))
      (then (local.get $n))
      (else
        (i64.add
          (call $fib (i64.sub (local.get $n) (i64.const 1)))
          (call $fib (i64.sub (local.get $n) (i64.const 2)))))))
  (func (export "_start")
    (drop (call $fib (i64.const 60)))))
