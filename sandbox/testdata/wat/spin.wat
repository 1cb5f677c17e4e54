;; spin.wat: loops forever without calling the host.
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm spin.wat -o spin.wasm
(module
  (memory (export "memory") 1)
  (func (export "_start")
    (loop $forever (br $forever))))
