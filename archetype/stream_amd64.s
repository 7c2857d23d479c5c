#include "textflag.h"

// func ntcopy(dst, src unsafe.Pointer, n uintptr)
//
// Copies n bytes, a multiple of 128, from src to dst, which is 16-byte aligned, with
// non-temporal stores: the destination's cache lines are neither read nor kept.
TEXT ·ntcopy(SB), NOSPLIT, $0-24
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	n+16(FP), CX
	TESTQ	CX, CX
	JEQ	done
loop:
	MOVOU	0(SI), X0
	MOVOU	16(SI), X1
	MOVOU	32(SI), X2
	MOVOU	48(SI), X3
	MOVOU	64(SI), X4
	MOVOU	80(SI), X5
	MOVOU	96(SI), X6
	MOVOU	112(SI), X7
	MOVNTO	X0, 0(DI)
	MOVNTO	X1, 16(DI)
	MOVNTO	X2, 32(DI)
	MOVNTO	X3, 48(DI)
	MOVNTO	X4, 64(DI)
	MOVNTO	X5, 80(DI)
	MOVNTO	X6, 96(DI)
	MOVNTO	X7, 112(DI)
	ADDQ	$128, SI
	ADDQ	$128, DI
	SUBQ	$128, CX
	JNE	loop
	// Non-temporal stores are weakly ordered: make them visible before any later store.
	SFENCE
done:
	RET

// func crcCopy3(dst, src unsafe.Pointer, blk uintptr, crc uint32) (a, b, c uint32)
//
// Copies three blocks of blk bytes (a multiple of 16, not 0) from src to dst, which is 16-byte
// aligned, with non-temporal stores, and returns the raw (not inverted) CRC-32C of each block:
// the first continues crc, the others start from 0. The three CRCs run interleaved, because
// one CRC32 instruction's result is ready only some cycles after it starts.
TEXT ·crcCopy3(SB), NOSPLIT, $0-44
	MOVQ	dst+0(FP), DI
	MOVQ	src+8(FP), SI
	MOVQ	blk+16(FP), R8
	MOVL	crc+24(FP), AX
	XORL	BX, BX
	XORL	CX, CX
	MOVQ	R8, R9
	LEAQ	(R8)(R8*1), R10
loop3:
	MOVOU	(SI), X0
	MOVOU	(SI)(R8*1), X1
	MOVOU	(SI)(R10*1), X2
	CRC32Q	(SI), AX
	CRC32Q	(SI)(R8*1), BX
	CRC32Q	(SI)(R10*1), CX
	CRC32Q	8(SI), AX
	CRC32Q	8(SI)(R8*1), BX
	CRC32Q	8(SI)(R10*1), CX
	MOVNTO	X0, (DI)
	MOVNTO	X1, (DI)(R8*1)
	MOVNTO	X2, (DI)(R10*1)
	ADDQ	$16, SI
	ADDQ	$16, DI
	SUBQ	$16, R9
	JNE	loop3
	SFENCE
	MOVL	AX, a+32(FP)
	MOVL	BX, b+36(FP)
	MOVL	CX, c+40(FP)
	RET

// func hasSSE42() bool
TEXT ·hasSSE42(SB), NOSPLIT, $0-1
	MOVL	$1, AX
	XORL	CX, CX
	CPUID
	SHRL	$20, CX
	ANDL	$1, CX
	MOVB	CX, ret+0(FP)
	RET
