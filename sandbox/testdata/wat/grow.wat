;; grow.wat: a memory bomb. Grows its memory a page at a time, writing to
;; every page it gets, until memory.grow fails; then prints the number of
;; 64 KiB pages it ended with and exits.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm grow.wat -o grow.wasm
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (local $pages i32) (local $p i32)
    (block $full
      (loop $more
        (br_if $full (i32.eq (memory.grow (i32.const 1)) (i32.const -1)))
        ;; Touch every 4 KiB of the new page so the host must back it.
        (local.set $p (i32.mul (i32.sub (memory.size) (i32.const 1)) (i32.const 65536)))
        (loop $touch
          (i32.store8 (local.get $p) (i32.const 1))
          (local.set $p (i32.add (local.get $p) (i32.const 4096)))
          (br_if $touch (i32.rem_u (local.get $p) (i32.const 65536))))
        (br $more)))
    ;; Print memory.size in decimal, then a newline.
    (local.set $pages (memory.size))
    (local.set $p (i32.const 63))
    (i32.store8 (i32.const 63) (i32.const 10))
    (loop $digits
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $pages) (i32.const 10))))
      (local.set $pages (i32.div_u (local.get $pages) (i32.const 10)))
      (br_if $digits (local.get $pages)))
    (i32.store (i32.const 0) (local.get $p))
    (i32.store (i32.const 4) (i32.sub (i32.const 64) (local.get $p)))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16)))))
