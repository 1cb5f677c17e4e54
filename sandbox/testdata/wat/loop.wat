;; loop.wat: a loop-heavy function for measuring what stopping on a
;; deadline costs. sum(n) adds 0..n-1 in a loop that calls nothing.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm loop.wat -o loop.wasm
(module
  (memory (export "memory") 1)
  (func (export "sum") (param $n i64) (result i64)
    (local $i i64) (local $acc i64)
    (block $done
      (loop $more
        (br_if $done (i64.ge_u (local.get $i) (local.get $n)))
        (local.set $acc (i64.add (local.get $acc) (local.get $i)))
        (local.set $i (i64.add (local.get $i) (i64.const 1)))
        (br $more)))
    (local.get $acc))
  (func (export "_start")))
