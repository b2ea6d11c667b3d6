/* The shim's exported dlopen: only looks at the flags, then JUMPS to libc's
 * dlopen with the caller's return address still on top of the stack.
 *
 * glibc resolves a bare library name through the DT_RUNPATH of the object
 * that called dlopen ($ORIGIN included), and finds that object from the
 * return address. A C wrapper calling the real dlopen would make every
 * dlopen in the process search relative to the shim, which breaks
 * torch-style extension loading. So, as for dlsym (preload/intercept/
 * dlsym_trampoline.S): save the arguments, ask the hidden C++ router
 * proflaunch_route_dlopen(file, mode) for libc's dlopen (it warns once about
 * RTLD_DEEPBIND on the way), restore the arguments and tail-jump. The shim
 * learns about loaded libraries from dl_iterate_phdr's counters, not here. */

    .hidden proflaunch_route_dlopen

    .text

    .globl dlopen
    .type dlopen, @function
    .p2align 4
dlopen:
    .cfi_startproc
    pushq %rdi
    .cfi_adjust_cfa_offset 8
    pushq %rsi
    .cfi_adjust_cfa_offset 8
    subq $8, %rsp                 /* keep %rsp 16-byte aligned at the call */
    .cfi_adjust_cfa_offset 8
    call proflaunch_route_dlopen
    addq $8, %rsp
    .cfi_adjust_cfa_offset -8
    popq %rsi
    .cfi_adjust_cfa_offset -8
    popq %rdi
    .cfi_adjust_cfa_offset -8
    testq %rax, %rax
    jz 1f
    jmpq *%rax
1:
    ret                           /* no libc dlopen: fail as a NULL handle */
    .cfi_endproc
    .size dlopen, .-dlopen

    .section .note.GNU-stack, "", @progbits
