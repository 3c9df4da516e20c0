// void lockstep_switch_sp(void** save_sp /* rdi */, void* load_sp /* rsi */)
// Saves the System V callee-saved registers and the SSE/x87 control words on
// the current stack, then restores them from the other stack.
    .text
    .globl lockstep_switch_sp
    .hidden lockstep_switch_sp
    .type lockstep_switch_sp, @function
lockstep_switch_sp:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size lockstep_switch_sp, .-lockstep_switch_sp

// First instructions of a new context: r12 holds the entry, r13 its argument.
    .globl lockstep_context_start
    .hidden lockstep_context_start
    .type lockstep_context_start, @function
lockstep_context_start:
    movq %r13, %rdi
    callq *%r12
    ud2
    .size lockstep_context_start, .-lockstep_context_start

    .section .note.GNU-stack,"",@progbits
