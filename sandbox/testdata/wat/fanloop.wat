;; fanloop.wat: fanout.wat's recursion with each call's body inside a loop
;; that goes round once. A function that runs straight into a loop has no
;; check at its entry, only at the loop, so what stops it is the loop's
;; check, passed the first time round in every call.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm fanloop.wat -o fanloop.wasm
(module
  (memory (export "memory") 1)
  (func $fib (param $n i64) (result i64)
    (loop $once (result i64)
      (if (result i64) (i64.lt_u (local.get $n) (i64.const 2))
        (then (local.get $n))
        (else
          (i64.add
            (call $fib (i64.sub (local.get $n) (i64.const 1)))
            (call $fib (i64.sub (local.get $n) (i64.const 2))))))))
  (func (export "_start")
    (drop (call $fib (i64.const 60)))))
