// void lockstep_switch_sp(void** save_sp /* rdi */, void* load_sp /* rsi */)
// Saves the System V callee-saved registers on the current stack, then
// restores them from the other stack. The SSE/x87 control words are not
// switched: all fibers of a worker share its floating-point environment, and
// CUDA code has no way to change rounding modes, so there is nothing to keep
// apart (and ldmxcsr/fldcw would double the cost of a switch).
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
    movq %rsp, (%rdi)
    movq %rsi, %rsp
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
