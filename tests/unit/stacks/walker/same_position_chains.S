/* Call chains that reach the same code at the same stack address through
 * different callers, written in assembly so that the frame sizes are exact
 * (native_walker_test). In every chain the capture callback is entered with
 * the same %rsp and returns to the same address; only a word further up the
 * stack tells the chains apart. Arguments: capture in %rdi, context in %rsi.
 */
    .text

/* chain_dispatch(capture, context, via): calls via(capture, context) from
 * its one call site, so the return address into it is the same for all. */
    .globl chain_dispatch
    .type chain_dispatch, @function
chain_dispatch:
    .cfi_startproc
    sub $8, %rsp
    .cfi_adjust_cfa_offset 8
    call *%rdx
    add $8, %rsp
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size chain_dispatch, .-chain_dispatch

/* chain_shared(capture, context): calls capture(context). */
    .type chain_shared, @function
chain_shared:
    .cfi_startproc
    sub $8, %rsp
    .cfi_adjust_cfa_offset 8
    mov %rdi, %rax
    mov %rsi, %rdi
    call *%rax
    add $8, %rsp
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size chain_shared, .-chain_shared

/* A frame of 16 bytes that calls `target`. */
#define RELAY(name, target)            \
    .globl name;                       \
    .type name, @function;             \
name:                                  \
    .cfi_startproc;                    \
    sub $8, %rsp;                      \
    .cfi_adjust_cfa_offset 8;          \
    call target;                       \
    add $8, %rsp;                      \
    .cfi_adjust_cfa_offset -8;         \
    ret;                               \
    .cfi_endproc;                      \
    .size name, .-name

/* A and B differ right above chain_shared ... */
RELAY(chain_via_a, chain_shared)
RELAY(chain_via_b, chain_shared)
/* ... and three frames further up. */
RELAY(chain_middle_2, chain_shared)
RELAY(chain_middle_1, chain_middle_2)
RELAY(chain_deep_a, chain_middle_1)
RELAY(chain_deep_b, chain_middle_1)

/* Frame-pointer chains. chain_fp_alloca(capture, context, bytes) keeps a
 * frame pointer (its CFA is %rbp+16) and allocates `bytes` below it, as
 * alloca does. chain_fp_small has a 16-byte frame and allocates 16 bytes,
 * chain_fp_large a 32-byte frame and allocates none: the capture is entered
 * with the same %rsp through both, chain_fp_alloca returns to the same
 * address, and the return address chain_fp_small left where chain_fp_large
 * keeps an unused local is still there - only %rbp differs. */
    .globl chain_fp_alloca
    .type chain_fp_alloca, @function
chain_fp_alloca:
.Lfp_alloca:
    .cfi_startproc
    push %rbp
    .cfi_adjust_cfa_offset 8
    .cfi_offset %rbp, -16
    mov %rsp, %rbp
    .cfi_def_cfa_register %rbp
    sub %rdx, %rsp
    mov %rdi, %rax
    mov %rsi, %rdi
    call *%rax
    leave
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size chain_fp_alloca, .-chain_fp_alloca

    .globl chain_fp_small
    .type chain_fp_small, @function
chain_fp_small:
.Lfp_small:
    .cfi_startproc
    sub $8, %rsp
    .cfi_adjust_cfa_offset 8
    mov $16, %edx
    call .Lfp_alloca
    add $8, %rsp
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size chain_fp_small, .-chain_fp_small

    .globl chain_fp_large
    .type chain_fp_large, @function
chain_fp_large:
.Lfp_large:
    .cfi_startproc
    sub $24, %rsp
    .cfi_adjust_cfa_offset 24
    xor %edx, %edx
    call .Lfp_alloca
    add $24, %rsp
    .cfi_adjust_cfa_offset -24
    ret
    .cfi_endproc
    .size chain_fp_large, .-chain_fp_large

/* chain_fp_pair(capture, first_context, second_context): chain_dispatch
 * through chain_fp_small with first_context, then from the same call site
 * through chain_fp_large with second_context, with nothing in between that
 * could overwrite the return address chain_fp_small left behind. */
    .globl chain_fp_pair
    .type chain_fp_pair, @function
chain_fp_pair:
    .cfi_startproc
    push %r12
    .cfi_adjust_cfa_offset 8
    .cfi_offset %r12, -16
    push %r13
    .cfi_adjust_cfa_offset 8
    .cfi_offset %r13, -24
    push %r14
    .cfi_adjust_cfa_offset 8
    .cfi_offset %r14, -32
    push %r15
    .cfi_adjust_cfa_offset 8
    .cfi_offset %r15, -40
    sub $8, %rsp
    .cfi_adjust_cfa_offset 8
    mov %rdi, %r12
    mov %rsi, %r13
    mov %rdx, %r14
    xor %r15d, %r15d
1:  mov %r12, %rdi
    mov %r13, %rsi
    lea .Lfp_small(%rip), %rdx
    test %r15, %r15
    jz 2f
    mov %r14, %rsi
    lea .Lfp_large(%rip), %rdx
2:  call chain_dispatch
    inc %r15
    cmp $2, %r15
    jb 1b
    add $8, %rsp
    .cfi_adjust_cfa_offset -8
    pop %r15
    .cfi_adjust_cfa_offset -8
    pop %r14
    .cfi_adjust_cfa_offset -8
    pop %r13
    .cfi_adjust_cfa_offset -8
    pop %r12
    .cfi_adjust_cfa_offset -8
    ret
    .cfi_endproc
    .size chain_fp_pair, .-chain_fp_pair

    .section .note.GNU-stack, "", @progbits
