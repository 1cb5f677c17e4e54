;; hostpanic.wat: makes a WASI function of wazero's panic. poll_oneoff is
;; asked for 0x10000001 subscriptions, whose size overflows 32 bits, so
;; wazero's bounds check passes and its decoding indexes out of range;
;; wazero recovers the panic as a trap.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm hostpanic.wat -o hostpanic.wasm
(module
  (import "wasi_snapshot_preview1" "poll_oneoff" (func $poll (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (func (export "_start")
    (drop (call $poll (i32.const 0) (i32.const 1000) (i32.const 0x10000001) (i32.const 2000)))))
