#include "textflag.h"

// func wasmMemorySize() int32
TEXT ·wasmMemorySize(SB), NOSPLIT, $0
	Get SP
	CurrentMemory
	I32Store ret+0(FP)
	RET
