/* The exported dlsym and dlvsym of the shim. See dlsym_interposer.h for why
 * these are assembly: when the shim does not handle a lookup, control must
 * reach libc's dlsym with the caller's return address still on top of the
 * stack, because glibc resolves RTLD_NEXT relative to that address.
 *
 * Both stubs save the argument registers, call the hidden C++ router
 * proflaunch_route_dlsym(handle, name, version), which returns
 * {result in %rax, handled in %rdx}, restore the arguments and either return
 * the result or tail-jump to libc. %r11 is scratch in the SysV ABI and is
 * not an argument register, so it carries `handled` past the restores. */

    .hidden proflaunch_route_dlsym
    .hidden proflaunch_real_dlsym_ptr
    .hidden proflaunch_real_dlvsym_ptr

    .text

    .globl dlsym
    .type dlsym, @function
    .p2align 4
dlsym:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp                 /* keep %rsp 16-byte aligned at the call */
    .cfi_adjust_cfa_offset 8
    xorl %edx, %edx               /* version = NULL */
    call proflaunch_route_dlsym
    movq %rdx, %r11
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testq %r11, %r11
    jz 1f
    ret
1:
    jmpq *proflaunch_real_dlsym_ptr(%rip)
    .cfi_endproc
    .size dlsym, .-dlsym

    .globl dlvsym
    .type dlvsym, @function
    .p2align 4
dlvsym:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    pushq %rdx                    /* three pushes: %rsp is 16-byte aligned */
    .cfi_adjust_cfa_offset 8
    call proflaunch_route_dlsym
    movq %rdx, %r11
    popq %rdx
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testq %r11, %r11
    jz 1f
    ret
1:
    jmpq *proflaunch_real_dlvsym_ptr(%rip)
    .cfi_endproc
    .size dlvsym, .-dlvsym

    .section .note.GNU-stack, "", @progbits
