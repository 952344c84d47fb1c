#include "textflag.h"

// func prefetch(p unsafe.Pointer, n uintptr)
TEXT ·prefetch(SB), NOSPLIT, $0-16
	MOVQ p+0(FP), AX
	MOVQ n+8(FP), CX
	LEAQ -1(AX)(CX*1), DX // the last byte
	PREFETCHT0 0(DX)
loop:
	PREFETCHT0 0(AX)
	ADDQ $64, AX
	SUBQ $64, CX
	JGT loop
	RET
