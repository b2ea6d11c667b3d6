/* A library built twice, with FRAME_BYTES 8 and 56, so that both builds have
 * the same code addresses and different unwind rules (native_walker_test:
 * one is unloaded and the other loaded at the same address).
 *
 * swap_call(capture, context) calls capture(context) from a frame of
 * FRAME_BYTES, its call at the same offset in both builds. The large build
 * also stores, where the small build's rule looks for the return address,
 * the address of decoy_return: a walk that used the small build's rule on
 * the large build would go through decoy_frame (whose rule then leads back
 * to the true caller), so a stale rule shows as an extra frame rather than
 * as a broken stack. */
    .text
    .p2align 6
    .globl swap_call
    .type swap_call, @function
swap_call:
    .cfi_startproc
    sub $FRAME_BYTES, %rsp
    .cfi_adjust_cfa_offset FRAME_BYTES
    lea decoy_return(%rip), %rax
#if FRAME_BYTES > 8
    mov %rax, 8(%rsp)
#endif
    mov %rdi, %rax
    mov %rsi, %rdi
    .org swap_call + 0x20, 0x90
    call *%rax
    add $FRAME_BYTES, %rsp
    .cfi_adjust_cfa_offset -FRAME_BYTES
    ret
    .cfi_endproc
    .size swap_call, .-swap_call

    .p2align 6
    .globl decoy_frame
    .type decoy_frame, @function
decoy_frame:
    .cfi_startproc
    sub $40, %rsp
    .cfi_adjust_cfa_offset 40
    nop
decoy_return:
    nop
    add $40, %rsp
    .cfi_adjust_cfa_offset -40
    ret
    .cfi_endproc
    .size decoy_frame, .-decoy_frame

    .section .note.GNU-stack, "", @progbits
