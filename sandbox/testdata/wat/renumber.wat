;; renumber.wat: a guest that asks fd_renumber for descriptors where no
;; file is open, up to far past any it may hold. wazero's own fd_renumber
;; puts the file there, growing the instance's descriptor table to that
;; index in host memory (8 bytes a descriptor, outside the guest's memory
;; limit: 16 GiB for 0x7fffffff). It expects a read-write workspace holding
;; inside.txt as its only preopen (fd 3), opens inside.txt twice, and
;; prints one line per attempt, "NAME ERRNO" (0 for success):
;;
;;	N ERRNO          fd_renumber(first file, N) for each N of $targets
;;	                 (after a success, the file is at N and the next
;;	                 attempt renumbers it from there; after a success at
;;	                 2^24 or past it, the rest are not tried, so that a
;;	                 host that grows its table costs 128 MiB, not 16 GiB)
;;	preopen-far E    fd_renumber(3, 0x7fffffff)
;;	onto-open E      fd_renumber(first file, second file)
;;	moved-from E     fd_close(first file) after that
;;	self E           fd_renumber(second file, second file)
;;	read-self E TEXT what fd_read of the second file then reads
;;	close-far E      fd_close(0x7fffffff)
;;	reopen E FD      path_open of inside.txt again: the descriptor it got
;;
;; Build (wabt), from this directory:
;;
;;	wat2wasm renumber.wat -o renumber.wasm
(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_renumber" (func $fd_renumber (param i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 1)

  ;; Scratch: 0 iovec, 8 read iovec, 16 count out, 24 opened fd,
  ;; 32..63 digits, 64..575 read buffer, 600 bytes read, 620 one byte;
  ;; the targets from 800, the names from 1024.

  (func $write (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 16))))

  ;; num prints n in decimal, unsigned.
  (func $num (param $n i32)
    (local $p i32)
    (local.set $p (i32.const 64))
    (loop $digits
      (local.set $p (i32.sub (local.get $p) (i32.const 1)))
      (i32.store8 (local.get $p) (i32.add (i32.const 48) (i32.rem_u (local.get $n) (i32.const 10))))
      (local.set $n (i32.div_u (local.get $n) (i32.const 10)))
      (br_if $digits (local.get $n)))
    (call $write (local.get $p) (i32.sub (i32.const 64) (local.get $p))))

  (func $space (i32.store8 (i32.const 620) (i32.const 32)) (call $write (i32.const 620) (i32.const 1)))
  (func $newline (i32.store8 (i32.const 620) (i32.const 10)) (call $write (i32.const 620) (i32.const 1)))

  ;; report prints "NAME ERRNO".
  (func $report (param $name i32) (param $nlen i32) (param $errno i32)
    (call $write (local.get $name) (local.get $nlen))
    (call $space)
    (call $num (local.get $errno))
    (call $newline))

  ;; open opens inside.txt under fd 3 for reading; the descriptor is at 24.
  (func $open (result i32)
    (call $path_open (i32.const 3) (i32.const 0) (i32.const 1024) (i32.const 10)
      (i32.const 0) (i64.const 2) (i64.const 0) (i32.const 0) (i32.const 24)))

  (func (export "_start")
    (local $a i32) (local $b i32) (local $i i32) (local $to i32) (local $e i32)
    (drop (call $open))
    (local.set $a (i32.load (i32.const 24)))
    (drop (call $open))
    (local.set $b (i32.load (i32.const 24)))
    ;; Every target, from the first file wherever it is now.
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $i) (i32.const 12)))
        (local.set $to (i32.load (i32.add (i32.const 800) (i32.shl (local.get $i) (i32.const 2)))))
        (local.set $e (call $fd_renumber (local.get $a) (local.get $to)))
        (if (i32.eqz (local.get $e)) (then (local.set $a (local.get $to))))
        (call $num (local.get $to))
        (call $space)
        (call $num (local.get $e))
        (call $newline)
        (br_if $done (i32.and (i32.eqz (local.get $e)) (i32.ge_u (local.get $to) (i32.const 0x1000000))))
        (local.set $i (i32.add (local.get $i) (i32.const 1)))
        (br $next)))
    (call $report (i32.const 1034) (i32.const 11) (call $fd_renumber (i32.const 3) (i32.const 0x7fffffff)))
    (call $report (i32.const 1045) (i32.const 9) (call $fd_renumber (local.get $a) (local.get $b)))
    (call $report (i32.const 1054) (i32.const 10) (call $fd_close (local.get $a)))
    (call $report (i32.const 1064) (i32.const 4) (call $fd_renumber (local.get $b) (local.get $b)))
    ;; read-self: what the second file reads after its renumbering onto itself.
    (i32.store (i32.const 8) (i32.const 64))
    (i32.store (i32.const 12) (i32.const 512))
    (local.set $e (call $fd_read (local.get $b) (i32.const 8) (i32.const 1) (i32.const 600)))
    (call $write (i32.const 1068) (i32.const 9))
    (call $space)
    (call $num (local.get $e))
    (call $space)
    (if (i32.eqz (local.get $e)) (then (call $write (i32.const 64) (i32.load (i32.const 600)))))
    (call $newline)
    (call $report (i32.const 1077) (i32.const 9) (call $fd_close (i32.const 0x7fffffff)))
    ;; reopen: the descriptor a new file gets is the lowest free one.
    (local.set $e (call $open))
    (call $write (i32.const 1086) (i32.const 6))
    (call $space)
    (call $num (local.get $e))
    (call $space)
    (call $num (i32.load (i32.const 24)))
    (call $newline))

  ;; $targets, rising: a free descriptor below the budget, near a budget
  ;; of 10 and the default budget of 256 open files, then far past any.
  (data (i32.const 800)
    "\06\00\00\00" ;; 6, free: no file is there
    "\0d\00\00\00" ;; 13
    "\0e\00\00\00" ;; 14
    "\00\01\00\00" ;; 256
    "\03\01\00\00" ;; 259
    "\04\01\00\00" ;; 260
    "\00\10\00\00" ;; 4096
    "\00\00\10\00" ;; 2^20
    "\00\00\00\01" ;; 2^24
    "\ff\ff\ff\7f" ;; 0x7fffffff
    "\00\00\00\80" ;; 0x80000000, negative as an i32
    "\ff\ff\ff\ff") ;; 0xffffffff, -1
  (data (i32.const 1024) "inside.txt")
  (data (i32.const 1034) "preopen-far")
  (data (i32.const 1045) "onto-open")
  (data (i32.const 1054) "moved-from")
  (data (i32.const 1064) "self")
  (data (i32.const 1068) "read-self")
  (data (i32.const 1077) "close-far")
  (data (i32.const 1086) "reopen")
)
