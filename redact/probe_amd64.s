//go:build amd64 && !purego

#include "textflag.h"

// grams8 makes eight little-endian 4-grams from 16 bytes broadcast to both
// 128-bit lanes: lane 0 the grams at offsets 0..3, lane 1 at 4..7.
DATA grams8<>+0x00(SB)/8, $0x0403020103020100
DATA grams8<>+0x08(SB)/8, $0x0605040305040302
DATA grams8<>+0x10(SB)/8, $0x0807060507060504
DATA grams8<>+0x18(SB)/8, $0x0a09080709080706
GLOBL grams8<>(SB), RODATA|NOPTR, $32

// func probe8(text *byte, i, n int, grams *[4096]uint64) (pos int, mask uint32)
//
// For each of eight positions: h = ((gram | 0x20202020) * 0x9E3779B1) >> 14
// (gramHash; gramBits is 18), then bit h of grams, read as 32-bit words
// (little endian, so word h>>5, bit h&31).
TEXT ·probe8(SB), NOSPLIT, $0-44
	MOVQ text+0(FP), SI
	MOVQ i+8(FP), DI
	MOVQ n+16(FP), BX
	MOVQ grams+24(FP), R8
	SUBQ $16, BX
	VMOVDQU grams8<>(SB), Y15
	MOVL $0x20202020, AX
	MOVD AX, X14
	VPBROADCASTD X14, Y14
	MOVL $0x9E3779B1, AX
	MOVD AX, X13
	VPBROADCASTD X13, Y13
	MOVL $31, AX
	MOVD AX, X12
	VPBROADCASTD X12, Y12
	XORL AX, AX

loop:
	CMPQ DI, BX
	JGT done
	VBROADCASTI128 (SI)(DI*1), Y0
	VPSHUFB Y15, Y0, Y0
	VPOR Y14, Y0, Y0
	VPMULLD Y13, Y0, Y0
	VPSRLD $14, Y0, Y0
	VPSRLD $5, Y0, Y1
	VPAND Y12, Y0, Y2
	VPCMPEQD Y3, Y3, Y3
	VPXOR Y4, Y4, Y4
	VPGATHERDD Y3, (R8)(Y1*4), Y4
	VPSRLVD Y2, Y4, Y4
	VPSLLD $31, Y4, Y4
	VMOVMSKPS Y4, AX
	TESTL AX, AX
	JNZ done
	ADDQ $8, DI
	JMP loop

done:
	VZEROUPPER
	MOVQ DI, pos+32(FP)
	MOVL AX, mask+40(FP)
	RET

// func positions(text *byte, from, n int, c0, c1 byte, fold bool, pos *[64]int32) (count, next int)
//
// Records each p in [from, next) with text[p] == c1 and, unless c0 is 0,
// text[p-1] == c0 (text[p-1]|0x20 == c0 with fold), 32 positions at a
// time while p+32 <= n and at most 32 positions are recorded already (so
// a block always fits in pos). from must be >= 1 when c0 is not 0.
TEXT ·positions(SB), NOSPLIT, $0-56
	MOVQ text+0(FP), SI
	MOVQ from+8(FP), DI
	MOVQ n+16(FP), BX
	MOVBLZX c0+24(FP), R9
	MOVBLZX c1+25(FP), AX
	MOVBLZX fold+26(FP), R10
	MOVQ pos+32(FP), R8
	XORQ DX, DX // count
	MOVD AX, X1
	VPBROADCASTB X1, Y1
	MOVD R9, X2
	VPBROADCASTB X2, Y2
	MOVL $0x20202020, AX
	MOVD AX, X3
	VPBROADCASTD X3, Y3
	TESTQ R10, R10
	JNZ keepfold
	VPXOR Y3, Y3, Y3 // no folding: OR with zero

keepfold:
	SUBQ $32, BX

loop:
	CMPQ DI, BX
	JGT done
	CMPQ DX, $32
	JGT done
	VMOVDQU (SI)(DI*1), Y0
	VPCMPEQB Y1, Y0, Y0
	TESTQ R9, R9
	JZ single
	VMOVDQU -1(SI)(DI*1), Y4
	VPOR Y3, Y4, Y4
	VPCMPEQB Y2, Y4, Y4
	VPAND Y4, Y0, Y0

single:
	VPMOVMSKB Y0, AX
	TESTL AX, AX
	JZ next

bits:
	BSFL AX, CX
	LEAQ (DI)(CX*1), R11
	MOVL R11, (R8)(DX*4)
	INCQ DX
	LEAL -1(AX), R11
	ANDL R11, AX
	JNZ bits

next:
	ADDQ $32, DI
	JMP loop

done:
	VZEROUPPER
	MOVQ DX, count+40(FP)
	MOVQ DI, next+48(FP)
	RET
