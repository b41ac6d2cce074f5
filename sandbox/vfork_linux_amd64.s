#include "textflag.h"

// func rawVfork(flags uintptr) (pid uintptr, errno syscall.Errno)
//
// clone(flags, 0, 0, 0, 0) for a child that shares the caller's memory and
// stack (CLONE_VM|CLONE_VFORK; see forkConfined). The return address is
// kept in a register across the system call: the child runs on this stack
// before the parent resumes and overwrites what lies below the caller's
// frame, the return address pushed by the CALL included.
TEXT ·rawVfork(SB),NOSPLIT|NOFRAME,$0-24
	MOVQ	flags+0(FP), DI
	XORQ	SI, SI
	XORQ	DX, DX
	XORQ	R10, R10
	XORQ	R8, R8
	MOVQ	$56, AX // SYS_clone
	POPQ	R12
	SYSCALL
	PUSHQ	R12
	CMPQ	AX, $0xfffffffffffff001
	JLS	done
	NEGQ	AX
	MOVQ	$0, pid+8(FP)
	MOVQ	AX, errno+16(FP)
	RET
done:
	MOVQ	AX, pid+8(FP)
	MOVQ	$0, errno+16(FP)
	RET
