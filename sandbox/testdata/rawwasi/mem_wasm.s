#include "textflag.h"

// func wasmMemorySize() int32
TEXT ·wasmMemorySize(SB), NOSPLIT, $0
	Get SP
	CurrentMemory
	I32Store ret+0(FP)
	RET

// func growMemory(pages int32) int32
TEXT ·growMemory(SB), NOSPLIT, $0
	Get SP
	I32Load pages+0(FP)
	GrowMemory
	I32Store ret+8(FP)
	RET
