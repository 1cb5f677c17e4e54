;; nomem.wat: a command module without memory, which the stop-check
;; rewrite refuses (it has nothing to step into Go with): it runs in a
;; runtime that closes an instance when the context of its call ends.
;; _start returns at once, an exit with status 0.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm nomem.wat -o nomem.wasm
(module
  (func (export "_start")))
