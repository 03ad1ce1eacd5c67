//go:build amd64 && !purego

#include "go_asm.h"
#include "textflag.h"

// bitsel: byte i is 1 << (i&7), for VPSHUFB by a class (< 32).
DATA bitsel<>+0x00(SB)/8, $0x8040201008040201
DATA bitsel<>+0x08(SB)/8, $0x8040201008040201
DATA bitsel<>+0x10(SB)/8, $0x8040201008040201
DATA bitsel<>+0x18(SB)/8, $0x8040201008040201
DATA bitsel<>+0x20(SB)/8, $0x8040201008040201
DATA bitsel<>+0x28(SB)/8, $0x8040201008040201
DATA bitsel<>+0x30(SB)/8, $0x8040201008040201
DATA bitsel<>+0x38(SB)/8, $0x8040201008040201
GLOBL bitsel<>(SB), RODATA|NOPTR, $64

// escapes: what an escaped n, t, r, b, f stands for, at its byte (0: none).
DATA escapes<>+0x00(SB)/8, $0x0000000000000000
DATA escapes<>+0x08(SB)/8, $0x0000000000000000
DATA escapes<>+0x10(SB)/8, $0x0000000000000000
DATA escapes<>+0x18(SB)/8, $0x0000000000000000
DATA escapes<>+0x20(SB)/8, $0x0000000000000000
DATA escapes<>+0x28(SB)/8, $0x0000000000000000
DATA escapes<>+0x30(SB)/8, $0x0000000000000000
DATA escapes<>+0x38(SB)/8, $0x0000000000000000
DATA escapes<>+0x40(SB)/8, $0x0000000000000000
DATA escapes<>+0x48(SB)/8, $0x0000000000000000
DATA escapes<>+0x50(SB)/8, $0x0000000000000000
DATA escapes<>+0x58(SB)/8, $0x0000000000000000
DATA escapes<>+0x60(SB)/8, $0x000c000000080000
DATA escapes<>+0x68(SB)/8, $0x000a000000000000
DATA escapes<>+0x70(SB)/8, $0x00000009000d0000
DATA escapes<>+0x78(SB)/8, $0x0000000000000000
GLOBL escapes<>(SB), RODATA|NOPTR, $128

// The filter's 4-gram hashes, 16 positions per ZMM register: the dwords
// of g are the grams (little endian), k gets bit d set when both hash bits of gram d
// are set (VPRORVD rotates by the count's low 5 bits: bit h&31 of word
// h>>5 to bit 0). Clobbers Z9, Z11 and Z12.
#define HASH16(g, k) \
	VPORD    Z31, g, Z11; \
	VPMULLD  Z14, Z11, Z12; \
	VPMULLD  Z21, Z11, Z11; \
	VPSRLD   $27, Z11, Z9; \
	VPSRLD   $22, Z11, Z11; \
	VPERMI2D filterTables_hash+64(R8), Z24, Z9; \
	VPRORVD  Z11, Z9, Z9; \
	VPTESTMD Z19, Z9, k; \
	VPSRLD   $27, Z12, Z9; \
	VPSRLD   $22, Z12, Z12; \
	VPERMI2D filterTables_hash2+64(R8), Z13, Z9; \
	VPRORVD  Z12, Z9, Z9; \
	VPTESTMD Z19, Z9, k, k

// The test of one class pair: a and b hold the classes of the two bytes;
// the byte a<<2 | b>>3 of the table (lo in a register, hi in memory),
// bit b&7, ANDed into k (all of it, when first). Clobbers Z8, Z9.
#define PAIRIDX(a, b) \
	VPSLLW     $2, a, Z8; \
	VPSRLW     $3, b, Z9; \
	VPTERNLOGD $0xF8, Z22, Z9, Z8

// func filterBlocks(text *byte, i, n int, t *filterTables, masks *[blocksPerCall * (1 + shortSlots)]uint64) (nb, next int)
//
// For each block of 64 positions from i on, while the block and the 3
// bytes after it are in text[:n] and at most blocksPerCall blocks: the
// positions where a keyword of 3 bytes or more may start (masks[5b]), and
// those of each 2-byte spelling (masks[5b+1+s]); see filterTables.
TEXT ·filterBlocks(SB), NOSPLIT, $0-56
	MOVQ text+0(FP), SI
	MOVQ i+8(FP), DI
	MOVQ n+16(FP), BX
	MOVQ t+24(FP), R8
	MOVQ masks+32(FP), R9
	XORQ R10, R10
	SUBQ $const_filterReach, BX

	MOVL $0x20202020, AX
	VPBROADCASTD AX, Z31
	MOVL $0x03030303, AX
	VPBROADCASTD AX, Z22
	MOVL $0x9E3779B1, AX
	VPBROADCASTD AX, Z21
	MOVL $0x85EBCA77, AX
	VPBROADCASTD AX, Z14
	MOVL $1, AX
	VPBROADCASTD AX, Z19
	VMOVDQU64 filterTables_class(R8), Z30   // class, first half
	VMOVDQU64 filterTables_p1(R8), Z29 // p1
	VMOVDQU64 filterTables_p2(R8), Z28 // p2
	VMOVDQU64 filterTables_p3(R8), Z27 // p3
	VMOVDQU64 filterTables_q1(R8), Z26 // q1
	VMOVDQU64 filterTables_q2(R8), Z25 // q2
	VMOVDQU64 filterTables_hash(R8), Z24 // hash words 0-15
	VMOVDQU64 filterTables_hash2(R8), Z13 // hash2 words 0-15
	VMOVDQU64 bitsel<>(SB), Z23
	MOVQ $0x1111111111111111, R11 // positions 4k
	MOVQ $0x2222222222222222, R12
	MOVQ $0x4444444444444444, R13
	MOVQ $0x8888888888888888, R14

loop:
	CMPQ DI, BX
	JGT  done
	CMPQ R10, $const_blocksPerCall
	JGE  done

	VMOVDQU8 (SI)(DI*1), Z0
	VMOVDQU8 1(SI)(DI*1), Z1
	VMOVDQU8 2(SI)(DI*1), Z2
	VMOVDQU8 3(SI)(DI*1), Z3

	// Classes.
	VPORD    Z31, Z0, Z4
	VPERMI2B filterTables_class+64(R8), Z30, Z4
	VPORD    Z31, Z1, Z5
	VPERMI2B filterTables_class+64(R8), Z30, Z5
	VPORD    Z31, Z2, Z6
	VPERMI2B filterTables_class+64(R8), Z30, Z6
	VPORD    Z31, Z3, Z7
	VPERMI2B filterTables_class+64(R8), Z30, Z7

	// (c0, c1): p1 into K1, q1 into K2.
	PAIRIDX(Z4, Z5)
	VMOVDQA64 Z8, Z10
	VPERMI2B  filterTables_p1+64(R8), Z29, Z8
	VPERMI2B  filterTables_q1+64(R8), Z26, Z10
	VPSHUFB   Z5, Z23, Z9
	VPTESTMB  Z9, Z8, K1
	VPTESTMB  Z9, Z10, K2

	// (c1, c2): p2, q2.
	PAIRIDX(Z5, Z6)
	VMOVDQA64 Z8, Z10
	VPERMI2B  filterTables_p2+64(R8), Z28, Z8
	VPERMI2B  filterTables_q2+64(R8), Z25, Z10
	VPSHUFB   Z6, Z23, Z9
	VPTESTMB  Z9, Z8, K1, K1
	VPTESTMB  Z9, Z10, K2, K2

	// (c2, c3): p3.
	PAIRIDX(Z6, Z7)
	VPERMI2B filterTables_p3+64(R8), Z27, Z8
	VPSHUFB  Z7, Z23, Z9
	VPTESTMB Z9, Z8, K1, K1

	// The 4-gram hashes. The dwords of the loads at +0, +1, +2, +3 are
	// the grams of positions 4k, 4k+1, 4k+2, 4k+3: their masks are
	// interleaved into one.
	HASH16(Z0, K3)
	HASH16(Z1, K4)
	HASH16(Z2, K5)
	HASH16(Z3, K6)
	KMOVW K3, AX
	PDEPQ R11, AX, AX
	KMOVW K4, CX
	PDEPQ R12, CX, CX
	ORQ   CX, AX
	KMOVW K5, CX
	PDEPQ R13, CX, CX
	ORQ   CX, AX
	KMOVW K6, CX
	PDEPQ R14, CX, CX
	ORQ   CX, AX
	KMOVQ AX, K3
	KANDQ    K1, K3, K1
	KORQ     K1, K2, K1
	KMOVQ    K1, (R9)

	// The 2-byte spellings.
	VPORD    filterTables_short+0*shortSlot__size+shortSlot_or(R8), Z0, Z8
	VPCMPEQB filterTables_short+0*shortSlot__size+shortSlot_c0(R8), Z8, K3
	VPCMPEQB filterTables_short+0*shortSlot__size+shortSlot_c1(R8), Z1, K3, K3
	KMOVQ    K3, 8(R9)
	VPORD    filterTables_short+1*shortSlot__size+shortSlot_or(R8), Z0, Z8
	VPCMPEQB filterTables_short+1*shortSlot__size+shortSlot_c0(R8), Z8, K3
	VPCMPEQB filterTables_short+1*shortSlot__size+shortSlot_c1(R8), Z1, K3, K3
	KMOVQ    K3, 16(R9)
	VPORD    filterTables_short+2*shortSlot__size+shortSlot_or(R8), Z0, Z8
	VPCMPEQB filterTables_short+2*shortSlot__size+shortSlot_c0(R8), Z8, K3
	VPCMPEQB filterTables_short+2*shortSlot__size+shortSlot_c1(R8), Z1, K3, K3
	KMOVQ    K3, 24(R9)
	VPORD    filterTables_short+3*shortSlot__size+shortSlot_or(R8), Z0, Z8
	VPCMPEQB filterTables_short+3*shortSlot__size+shortSlot_c0(R8), Z8, K3
	VPCMPEQB filterTables_short+3*shortSlot__size+shortSlot_c1(R8), Z1, K3, K3
	KMOVQ    K3, 32(R9)

	ADDQ $(1+const_shortSlots)*8, R9
	ADDQ $const_filterBlock, DI
	INCQ R10
	JMP  loop

done:
	VZEROUPPER
	MOVQ R10, nb+40(FP)
	MOVQ DI, next+48(FP)
	RET

// func unescapeBlocks(src, dst *byte, n int) (flags int)
//
// Copies src[:n] to dst, each escape \n, \t, \r, \b, \f of it written as
// the backslash and the control byte (see unescapeView), 64 bytes at a
// time; which bytes are escaped (follow a backslash that is not itself
// escaped) is found as simdjson does, carried from block to block. flags:
// 1 when an escaped 'u' was seen (the caller then reads the escapes one
// by one), 2 when an escaped '/' was.
TEXT ·unescapeBlocks(SB), NOSPLIT, $0-32
	MOVQ src+0(FP), SI
	MOVQ dst+8(FP), DX
	MOVQ n+16(FP), BX
	XORQ DI, DI
	XORQ R11, R11 // the next byte is escaped
	MOVQ $0xAAAAAAAAAAAAAAAA, R13
	KXORQ K5, K5, K5 // escaped 'u' seen
	KXORQ K6, K6, K6 // escaped '/' seen

	MOVL $0x5c, AX
	VPBROADCASTB AX, Z31
	MOVL $0x75, AX
	VPBROADCASTB AX, Z25
	MOVL $0x2f, AX
	VPBROADCASTB AX, Z24
	VMOVDQU64 escapes<>+0x00(SB), Z22 // bytes 0-63
	VMOVDQU64 escapes<>+0x40(SB), Z23 // bytes 64-127
	MOVQ $-1, AX
	KMOVQ AX, K7

uloop:
	MOVQ BX, CX
	SUBQ DI, CX
	JLE  udone
	CMPQ CX, $64
	JGE  ufull
	MOVQ $1, AX
	SHLQ CX, AX
	DECQ AX
	KMOVQ AX, K7

ufull:
	VMOVDQU8.Z (SI)(DI*1), K7, Z0
	VPCMPEQB Z31, Z0, K1
	KMOVQ    K1, AX
	// Escaped bytes (R14) from the backslashes (AX) and the carry.
	MOVQ R11, R14
	NOTQ R14
	ANDQ AX, R14           // backslashes not escaped themselves
	LEAQ (R14)(R14*1), R15
	ORQ  R13, R15
	SUBQ R14, R15
	XORQ R13, R15          // escape and terminal code
	MOVQ AX, R14
	ORQ  R11, R14
	XORQ R15, R14          // escaped
	ANDQ AX, R15           // escapes
	SHRQ $63, R15
	MOVQ R15, R11
	KMOVQ R14, K2

	// The escaped n, t, r, b, f (ASCII: the table is read by the low 7
	// bits) take the control byte.
	VPMOVB2M   Z0, K3
	KANDNQ     K2, K3, K3
	VMOVDQA64  Z0, Z1
	VPERMI2B   Z23, Z22, Z1
	VPTESTMB   Z1, Z1, K3, K3
	VMOVDQU8   Z1, K3, Z0
	VPCMPEQB   Z25, Z0, K2, K4
	KORQ       K4, K5, K5
	VPCMPEQB   Z24, Z0, K2, K4
	KORQ       K4, K6, K6

	VMOVDQU8 Z0, K7, (DX)(DI*1)
	ADDQ $64, DI
	JMP  uloop

udone:
	XORQ R12, R12
	KORTESTQ K5, K5
	JZ   unou
	ORQ  $1, R12

unou:
	KORTESTQ K6, K6
	JZ   unos
	ORQ  $2, R12

unos:
	VZEROUPPER
	MOVQ R12, flags+24(FP)
	RET
