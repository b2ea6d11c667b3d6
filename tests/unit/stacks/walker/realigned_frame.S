/* shape_realigned(capture, context): calls capture(context) from a frame
 * that realigns the stack to 64 bytes through a register, the way GCC does
 * it when the incoming stack must still be reached (DRAP: main of programs
 * built with -mstackrealign): the CFA is the expression [%rbp - 8], which
 * the shim's walker does not evaluate - libunwind takes the stack. */
    .text
    .globl shape_realigned
    .type shape_realigned, @function
shape_realigned:
    .cfi_startproc
    lea 8(%rsp), %r10
    .cfi_def_cfa %r10, 0
    and $-64, %rsp
    push -8(%r10)
    push %rbp
    .cfi_escape 0x10, 0x06, 0x02, 0x76, 0x00   /* DW_CFA_expression rbp: DW_OP_breg6 0 */
    mov %rsp, %rbp
    push %r10
    .cfi_escape 0x0f, 0x03, 0x76, 0x78, 0x06   /* DW_CFA_def_cfa_expression: DW_OP_breg6 -8, DW_OP_deref */
    sub $8, %rsp
    mov %rdi, %rax
    mov %rsi, %rdi
    call *%rax
    mov -8(%rbp), %r10
    .cfi_def_cfa %r10, 0
    leave
    .cfi_restore %rbp
    lea -8(%r10), %rsp
    .cfi_def_cfa %rsp, 8
    ret
    .cfi_endproc
    .size shape_realigned, .-shape_realigned

    .section .note.GNU-stack, "", @progbits
