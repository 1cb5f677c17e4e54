;; tablegrow.wat: a table bomb. Its one table declares no maximum, so it
;; could grow to 2^32 entries of host memory; it asks table.grow for 2^31
;; entries at once, then for 2^16 more, and prints "grew" or "refused"
;; for each, and the table's size at the end as a decimal number.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm tablegrow.wat -o tablegrow.wasm
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (table $t 1 funcref)
  (data (i32.const 16) "grew\n")
  (data (i32.const 32) "refused\n")
  (func $say (param $ok i32)
    ;; iovec at 64: the word, then fd_write to stdout
    (if (local.get $ok)
      (then (i32.store (i32.const 64) (i32.const 16)) (i32.store (i32.const 68) (i32.const 5)))
      (else (i32.store (i32.const 64) (i32.const 32)) (i32.store (i32.const 68) (i32.const 8))))
    (drop (call $fd_write (i32.const 1) (i32.const 64) (i32.const 1) (i32.const 72))))
  (func $number (param $n i32)
    (local $p i32)
    ;; digits written backwards from 127, then a newline at 128
    (i32.store8 (i32.const 128) (i32.const 10))
    (local.set $p (i32.const 128))
    (loop $digit
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digit (local.get $n)))
    (i32.store (i32.const 64) (local.get $p))
    (i32.store (i32.const 68) (i32.sub (i32.const 129) (local.get $p)))
    (drop (call $fd_write (i32.const 1) (i32.const 64) (i32.const 1) (i32.const 72))))
  (func (export "_start")
    (call $say (i32.ne (table.grow $t (ref.null func) (i32.const 0x80000000)) (i32.const -1)))
    (call $say (i32.ne (table.grow $t (ref.null func) (i32.const 0x10000)) (i32.const -1)))
    (call $number (table.size $t))))
