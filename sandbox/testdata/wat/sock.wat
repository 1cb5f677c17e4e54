;; sock.wat: imports sock_accept and calls it on fd 3, exiting with the
;; errno it got. The sandbox refuses to load it unless the policy grants
;; the import; granted, there is still no socket to accept on.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm sock.wat -o sock.wasm
(module
  (import "wasi_snapshot_preview1" "sock_accept" (func $sock_accept (param i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "proc_exit" (func $proc_exit (param i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (call $proc_exit (call $sock_accept (i32.const 3) (i32.const 0) (i32.const 0)))))
