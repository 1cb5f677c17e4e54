;; start.wat: a module with a start function, which runs when the module
;; is instantiated. With no arguments it stores 7 and _start exits with the
;; stored value (so 7 shows the start function ran first); with any
;; argument the start function loops forever, before _start could begin.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm start.wat -o start.wasm
(module
  (import "wasi_snapshot_preview1" "args_sizes_get" (func $args_sizes_get (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func $init
    (drop (call $args_sizes_get (i32.const 0) (i32.const 4)))
    (if (i32.gt_u (i32.load (i32.const 0)) (i32.const 1))
      (then (loop $forever (br $forever))))
    (i32.store (i32.const 16) (i32.const 7)))
  (start $init)
  (func (export "_start")
    (call $proc_exit (i32.load (i32.const 16)))))
